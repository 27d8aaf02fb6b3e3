import type { DeliverableMessage } from '../../shared/message'
import type { DeliveryResult, RetryState } from '../../webhooks/index'

// The worker speaks the Webhooks destination's types at the boundary: a request is a
// `DeliveryAttempt`, an attempt's result a `DeliveryResult`, the schedule reads a `RetryState`.

/** Options of one attempt. */
export interface SendOptions {
  /** Send to these of the destination's {@link Destination.urls} only (the others' circuits are open). */
  urls?: readonly string[]
}

/** What the worker drives: one attempt at delivering a message. The Webhooks destination is one. */
export interface Destination {
  send(message: DeliverableMessage, options?: SendOptions): Promise<DeliveryResult>
  /**
   * The URLs each attempt goes to, when the destination sends to URLs: the circuit breaker keeps a
   * circuit and a limit on requests in flight for each. A destination without them has neither.
   */
  readonly urls?: readonly string[]
}

/**
 * How a failed delivery is retried: `schedule` says when the next attempt goes (`undefined` once
 * the window is spent), and `window` is that window's length from the first attempt, ms — the
 * breaker dead-letters a delivery whose URLs stay open past it. One value, so the two never part.
 */
export interface RetryPolicy {
  schedule: (state: RetryState) => number | undefined
  /** ms from the first attempt. */
  window: number
}

/**
 * What one attempt came to: the destination's result, or why no request was made at all. `logs`:
 * the `console` lines the destination's function printed during the attempt, kept with it.
 */
export type AttemptResult = { logs?: readonly string[] } & (
  | { kind: 'sent'; result: DeliveryResult }
  /** No request left: the destination is gone from the configuration, or threw (it can never send the message), or its function failed. */
  | { kind: 'unsent'; error: string }
  /** The delivery step (a destination's function) dropped the message: the delivery ends as `filtered`, with `reason`. */
  | { kind: 'filtered'; reason: string }
  /** The delivery step (a function's `RetryError`) asked for a retry: retried on the usual schedule. */
  | { kind: 'function-retry'; error: string }
)
