import type { DeliveryAttempt } from './post'

/** The outcome of one attempt to deliver a message to every configured URL. */
export interface DeliveryResult {
  /** Some URL answered 2xx: the message is processed and is not retried to the others. */
  ok: boolean
  /**
   * Not ok, and worth another attempt later: some URL timed out, failed on the network, or
   * answered 429 or 5xx. Other 4xx and 3xx (redirects are not followed) are not retried.
   */
  retryable: boolean
  /** Each URL's status or error and duration, in the order the webhooks are configured. */
  attempts: DeliveryAttempt[]
  /** The longest `Retry-After` a failing receiver asked for, in milliseconds. */
  retryAfterMs?: number
}
