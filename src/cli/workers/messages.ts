import type { RelayOptions } from '../../relay/index'
import type { RecentRates } from '../../relay/events/readings'
import type { MetricsSnapshot } from '../../relay/telemetry/metrics'
import type { MinuteCounts } from '../../relay/telemetry/minute-history'

// What the primary of `tracklet relay --workers N` and its workers say to each other over the
// cluster's IPC channel: the worker asks once it listens for messages (one sent before would be
// lost), the options go down (validated by the primary, so every worker runs the same config),
// the URL comes up once the worker listens; on SIGHUP the primary sends the reloaded options.

/** A worker to the primary: send the options. */
export interface ReadyMessage {
  kind: 'tracklet-relay-ready'
}

/** The primary to a worker it just forked. */
export interface StartMessage {
  kind: 'tracklet-relay-start'
  options: RelayOptions
}

/**
 * The primary to each worker it sent options to: a reload of the config file (SIGHUP), checked by
 * the primary; the worker applies it once its relay runs (a later one wins over an earlier one).
 */
export interface ReloadMessage {
  kind: 'tracklet-relay-reload'
  options: RelayOptions
}

/** A worker to the primary, once its relay listens. */
export interface ListeningMessage {
  kind: 'tracklet-relay-listening'
  url: string
}

export const isStartMessage = hasKind<StartMessage>('tracklet-relay-start')

export const isReloadMessage = hasKind<ReloadMessage>('tracklet-relay-reload')

export const isListeningMessage = hasKind<ListeningMessage>('tracklet-relay-listening')

export const isReadyMessage = hasKind<ReadyMessage>('tracklet-relay-ready')

// The relay's figures under `--workers`: the worker a scrape (or the operator page) reaches asks
// the primary, which asks every worker for its own and answers with the sum (./figures.ts).

/** What a worker asks the primary for: the relay's metrics exposition, its recent rates, its last hour. */
export type FiguresKind = 'metrics' | 'rates' | 'hour'

/** A worker to the primary: gather the relay's figures of `what`. */
export interface GatherMessage {
  kind: 'tracklet-relay-gather'
  id: number
  what: FiguresKind
}

/** The primary to a worker: report your own figures of `what`. */
export interface ReportMessage {
  kind: 'tracklet-relay-report'
  id: number
  what: FiguresKind
  /** Whether to read the store-wide gauges (the outbox): one worker per scrape does. */
  storeWide: boolean
}

/** A worker to the primary: its own figures, or why it has none. */
export interface ReportedMessage {
  kind: 'tracklet-relay-reported'
  id: number
  metrics?: MetricsSnapshot
  rates?: RecentRates
  /** Its own minutes of the last hour. */
  hour?: MinuteCounts[]
  error?: string
}

/** The primary to the worker that asked: the relay's figures, or why there are none. */
export interface GatheredMessage {
  kind: 'tracklet-relay-gathered'
  id: number
  metrics?: { contentType: string; text: string }
  rates?: RecentRates
  /** Every worker's minutes of the last hour, together (a minute once per worker that counted in it). */
  hour?: MinuteCounts[]
  error?: string
}

export const isGatherMessage = hasKind<GatherMessage>('tracklet-relay-gather')

export const isReportMessage = hasKind<ReportMessage>('tracklet-relay-report')

export const isReportedMessage = hasKind<ReportedMessage>('tracklet-relay-reported')

export const isGatheredMessage = hasKind<GatheredMessage>('tracklet-relay-gathered')

// A guard for the message of `kind`: messages from another program on the channel are not ours.
function hasKind<M extends { kind: string }>(kind: M['kind']): (message: unknown) => message is M {
  return (message: unknown): message is M => (message as { kind?: unknown } | null)?.kind === kind
}
