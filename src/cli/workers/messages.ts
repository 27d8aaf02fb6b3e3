import type { RelayOptions } from '../../relay/index'
import type { RecentRates } from '../../relay/events/readings'
import type { MetricsSnapshot } from '../../relay/telemetry/metrics'

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

export function isStartMessage(message: unknown): message is StartMessage {
  return (message as Partial<StartMessage> | null)?.kind === 'tracklet-relay-start'
}

export function isReloadMessage(message: unknown): message is ReloadMessage {
  return (message as Partial<ReloadMessage> | null)?.kind === 'tracklet-relay-reload'
}

export function isListeningMessage(message: unknown): message is ListeningMessage {
  return (message as Partial<ListeningMessage> | null)?.kind === 'tracklet-relay-listening'
}

export function isReadyMessage(message: unknown): message is ReadyMessage {
  return (message as Partial<ReadyMessage> | null)?.kind === 'tracklet-relay-ready'
}

// The relay's figures under `--workers`: the worker a scrape (or the operator page) reaches asks
// the primary, which asks every worker for its own and answers with the sum (./figures.ts).

/** What a worker asks the primary for: the relay's metrics exposition, or its recent rates. */
export type FiguresKind = 'metrics' | 'rates'

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
  error?: string
}

/** The primary to the worker that asked: the relay's figures, or why there are none. */
export interface GatheredMessage {
  kind: 'tracklet-relay-gathered'
  id: number
  metrics?: { contentType: string; text: string }
  rates?: RecentRates
  error?: string
}

export function isGatherMessage(message: unknown): message is GatherMessage {
  return (message as Partial<GatherMessage> | null)?.kind === 'tracklet-relay-gather'
}

export function isReportMessage(message: unknown): message is ReportMessage {
  return (message as Partial<ReportMessage> | null)?.kind === 'tracklet-relay-report'
}

export function isReportedMessage(message: unknown): message is ReportedMessage {
  return (message as Partial<ReportedMessage> | null)?.kind === 'tracklet-relay-reported'
}

export function isGatheredMessage(message: unknown): message is GatheredMessage {
  return (message as Partial<GatheredMessage> | null)?.kind === 'tracklet-relay-gathered'
}
