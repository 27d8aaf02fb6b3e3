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

/** Counters of `analytics.stats()`, in messages. */
export interface AnalyticsStats {
  /** Accepted and waiting to be sent. */
  queued: number
  /** In a batch being sent (or waiting to be retried). */
  inFlight: number
  /** Delivered (the API answered 2xx). */
  delivered: number
  /** Failed and reported, including calls refused at the call. */
  failed: number
  /** Present, `true`, when the client was made with `disable: true`: nothing is sent, valid calls count as delivered. */
  disabled?: true
}

/** The events of an `Analytics` client. */
export interface AnalyticsEvents {
  /** Every failure, whether or not its call had a callback. Without a listener, nothing is thrown. */
  error: [error: AnalyticsError]
}
