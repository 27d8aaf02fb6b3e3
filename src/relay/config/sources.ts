import { DESTINATIONS } from '../destinations/index'
import type { SourceTracking } from './plan'

/** The Webhooks destination's name: the key in `sources[].destinations` and in `integrations`. */
export const WEBHOOKS_DESTINATION = 'Webhooks'

/** Destination names the relay knows; the keys of `sources[].destinations` (case sensitive). */
export const DESTINATION_NAMES: readonly string[] = DESTINATIONS.map((module) => module.name)

/**
 * A configured source as ingest, the admin API and the worker route by it: its name and the
 * names of the destinations it has.
 */
export interface RoutedSource {
  name: string
  destinations: readonly string[]
  /** Track event names acknowledged but never delivered (`schema.blockedEvents`). */
  blockedEvents?: ReadonlySet<string>
  /** Disabled through the admin API: ingest refuses its messages (403 `ERR_SOURCE_DISABLED`). */
  disabled?: true
  /** The source's tracking plan and its actions (`schema.plan`); absent: nothing is checked. */
  tracking?: SourceTracking
}
