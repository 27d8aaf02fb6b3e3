import type { DeliverableMessage } from '../../shared/message'

/** One HTTP request of an attempt, as a destination reports it. */
export interface DestinationRequest {
  url: string
  status?: number
  error?: string
  /** The error's stable code, when it has one (`ECONNREFUSED`, `ERR_BLOCKED_ADDRESS`, …). */
  code?: string
  /** How long the request took, in milliseconds. */
  ms: number
  /** The receiver's `Retry-After`, in milliseconds, when it sent one with a failure. */
  retryAfterMs?: number
  /** The start of the receiver's answer to a failed request, kept with the attempt. */
  responseBody?: string
  /** A failed request's headers, secrets hidden, kept with the attempt. */
  requestHeaders?: Record<string, string>
}

/** What one attempt to deliver a message came to. */
export interface DestinationResult {
  /** The message was delivered (a receiver answered 2xx). */
  ok: boolean
  /** It failed in a way worth trying again (a timeout, a network error, 429, 5xx). */
  retryable: boolean
  /** Every request made. */
  attempts: readonly DestinationRequest[]
  /** A receiver's `Retry-After`, in milliseconds. */
  retryAfterMs?: number
}

/** Options of one attempt. */
export interface SendOptions {
  /** Send to these of the destination's {@link Destination.urls} only (the others' circuits are open). */
  urls?: readonly string[]
}

/** What the worker drives: one attempt at delivering a message. The Webhooks destination is one. */
export interface Destination {
  send(message: DeliverableMessage, options?: SendOptions): Promise<DestinationResult>
  /**
   * The URLs each attempt goes to, when the destination sends to URLs: the circuit breaker keeps a
   * circuit and a limit on requests in flight for each. A destination without them has neither.
   */
  readonly urls?: readonly string[]
}

/** When to try again after the attempt numbered `attempt` (1 for the first) failed, or `undefined` once the window is spent. */
export type RetrySchedule = (input: {
  attempt: number
  firstAttemptAt: number
  now: number
  retryAfterMs?: number
}) => number | undefined
