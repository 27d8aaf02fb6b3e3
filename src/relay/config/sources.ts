import { describe } from '../../shared/validate'
import { DESTINATIONS } from '../destinations/index'
import type { Rule } from '../kit/rules'
import type { SourceTracking } from './plan'

/**
 * What a source's name may be (docs/relay.md, "Sources"): 1 to 64 ASCII letters, digits, `.`, `_`
 * and `-`, starting with a letter or a digit. A name goes into URLs, file names, metric labels and
 * generated code; a narrow set keeps it plain text in each.
 */
export const SOURCE_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/

/** {@link SOURCE_NAME_PATTERN} in words, for the errors that refuse a name. */
export const SOURCE_NAME_RULE = '1 to 64 letters (a-z, A-Z), digits, ".", "_" or "-", starting with a letter or digit'

/** `sources[].name` in the config file, and the name of `PUT /v1/sources/:name`. */
export const sourceNameRule: Rule<string> = (value, field, problems) => {
  if (typeof value === 'string' && SOURCE_NAME_PATTERN.test(value)) return value
  problems.add(field, `must be ${SOURCE_NAME_RULE}, got ${shown(value)}`)
  return undefined
}

// A refused name as the error shows it: quoted, every character outside printable ASCII escaped.
function shown(value: unknown): string {
  if (typeof value !== 'string') return describe(value)
  const cut = value.length > 80 ? `${value.slice(0, 80)}...` : value
  return JSON.stringify(cut).replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
}

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
  /** The destinations set `ordered: true` (docs/delivery-controls.md, "Ordering"); absent: none. */
  ordered?: ReadonlySet<string>
}
