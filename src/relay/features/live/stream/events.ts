/**
 * The live stream's events (`GET /v1/stream`, docs/operations.md "The live stream"): each is sent
 * as an SSE event whose `event:` is its kind and whose `data:` is one JSON object; `at` is ISO 8601
 * UTC. These names and fields are a contract: `tracklet tail` and the operator page read them.
 */

/** A message accepted by ingest (durably in the outbox). */
export interface IngestedEvent {
  at: string
  source: string
  messageId: string
  type: string
  event?: string
  userId?: string
}

/** A message (or a whole request, with no `messageId`) that ingest refused. */
export interface RefusedEvent {
  at: string
  source?: string
  messageId?: string
  /** The refusal's kind: `invalid`, `too_large`, `unstorable`, `duplicate`, or a request's error code. */
  kind: string
  reason: string
}

/** A message that was accepted but goes nowhere: a blocked event (no delivery), or a function's drop. */
export interface FilteredEvent {
  at: string
  source: string
  messageId: string
  reason: string
  deliveryId?: string
  /** The one destination it was withheld from (consent), when the others still got it. */
  destination?: string
}

/** What became of a delivery attempt. */
export type AttemptOutcome = 'delivered' | 'retry' | 'failed' | 'filtered'

/** One delivery attempt, with the receiver's answer. */
export interface AttemptEvent {
  at: string
  source: string
  deliveryId: string
  messageId: string
  url: string
  outcome: AttemptOutcome
  /** The receiver's HTTP status, when it answered. */
  status?: number
  /** Why the attempt failed (the receiver's answer, a timeout, a refused connection). */
  error?: string
  /** How long the attempt took, milliseconds. */
  ms: number
}

/** A message of the source a `forward` reader follows, formatted and signed by the relay. */
export interface ForwardedMessage {
  messageId: string
  /** The request body the source's Webhooks destination would send. */
  body: string
  /** Its signature header's value, as the destination would send it (none without a shared secret). */
  signature?: string
}

/** Events a slow reader could not take, skipped for it alone. */
export interface SkippedEvent {
  count: number
}

/** Each kind of the stream with its data. `violation` is reserved for tracking plans. */
export interface StreamEventData {
  ingested: IngestedEvent
  refused: RefusedEvent
  violation: Record<string, unknown> & { at: string; source: string }
  filtered: FilteredEvent
  attempt: AttemptEvent
}

/** The kinds a reader may ask for (`kinds=`): every one by default. */
export const STREAM_KINDS = ['ingested', 'refused', 'violation', 'filtered', 'attempt'] as const
export type StreamKind = (typeof STREAM_KINDS)[number]

/** One event of the stream, as published by ingest and delivery. */
export type StreamEvent = { [K in StreamKind]: { kind: K; data: StreamEventData[K] } }[StreamKind]
