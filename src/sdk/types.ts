import type { Message } from '../shared/message'
import type { AnalyticsError } from './errors'

/**
 * Called exactly once when a message settles: `err` is `undefined` once it is delivered, or the
 * reason it failed. `message` is the message as it was sent (for a refused call: its fields as
 * given, with `type`).
 */
export type MessageCallback = (err: AnalyticsError | undefined, message: Message) => void

/** Options of `closeAndFlush()`. */
export interface CloseOptions {
  /**
   * The longest `closeAndFlush()` waits, in milliseconds. Messages not delivered by then fail
   * with `ERR_CLOSED`.
   * @default 30000
   */
  timeout?: number | undefined
}

/** Options of `flush()`. */
export interface FlushOptions {
  /**
   * The longest `flush()` waits, in milliseconds: it resolves by then at the latest. Messages still
   * in flight keep going and settle later (nothing is failed by it), so a serverless handler is
   * never held for the whole retry schedule while the API is down.
   * @default no limit: until everything queued before the call has settled
   */
  timeout?: number | undefined
}

/** Counters of `analytics.stats()`: messages, except `requests`, `retries` and `bytesSent`. */
export interface AnalyticsStats {
  /** Accepted and waiting to be sent. */
  queued: number
  /** In a batch being sent (or waiting to be retried). */
  inFlight: number
  /** Delivered (the API answered 2xx). */
  delivered: number
  /** Failed and reported, including calls refused at the call (not those `beforeSend` dropped). */
  failed: number
  /** Dropped by `beforeSend` (it returned `null` or `undefined`): not sent, not failed. */
  filtered: number
  /** HTTP requests made for batches, retries included. */
  requests: number
  /** Of those requests, the retries. */
  retries: number
  /** Request body bytes as sent (compressed when `gzip` is on), retries included. */
  bytesSent: number
  /** Present, `true`, when the client was made with `disable: true`: nothing is sent, valid calls count as delivered. */
  disabled?: true
}

/** The events of an `Analytics` client. */
export interface AnalyticsEvents {
  /** Every failure, whether or not its call had a callback. Without a listener, nothing is thrown. */
  error: [error: AnalyticsError]
}
