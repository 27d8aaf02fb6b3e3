import { equalJitterBackoff } from '../shared/retry'
/** How long a delivery is retried, from its first attempt: 4 hours, in milliseconds. */
export const RETRY_WINDOW_MS = 4 * 60 * 60 * 1000
/** The wait after the first failed attempt, before jitter: 1 second. */
export const RETRY_BASE_DELAY_MS = 1000
/** The longest wait between two attempts, before jitter: 10 minutes. */
export const RETRY_MAX_DELAY_MS = 10 * 60 * 1000

/** What the schedule needs to know about a delivery after a failed attempt. */
export interface RetryState {
  /** How many attempts have failed so far (1 after the first). */
  attempt: number
  /** When the first attempt was made, in epoch milliseconds. */
  firstAttemptAt: number
  /** The current time, in epoch milliseconds. */
  now: number
  /** The receiver's `Retry-After`, in milliseconds, when the last attempt carried one. */
  retryAfterMs?: number | undefined
}

/**
 * When to make the next attempt of a delivery whose `attempt`-th attempt just failed, in epoch
 * milliseconds — or `undefined` when the 4-hour window since the first attempt is spent (give up:
 * dead-letter it).
 *
 * The wait doubles from 1 s (1, 2, 4, … s) up to 10 min, with "equal jitter": a random point in
 * the upper half of that wait, so that receivers recovering from an outage are not hit by every
 * delivery at once. A `Retry-After` is honoured: the next attempt is never sooner than the
 * receiver asked. No attempt is ever scheduled past the end of the window; the last one falls on it.
 *
 * @param random A source of numbers in [0, 1); inject one for reproducible tests.
 * @throws {RangeError} when `attempt` is not an integer ≥ 1, or a time or `retryAfterMs` is not
 * a finite number (≥ 0 for `retryAfterMs`).
 */
export function nextAttemptAt(state: RetryState, random: () => number = Math.random): number | undefined {
  const { attempt, firstAttemptAt, now, retryAfterMs } = state
  if (!Number.isInteger(attempt) || attempt < 1) {
    throw new RangeError(`nextAttemptAt: attempt must be an integer ≥ 1, got ${String(attempt)}`)
  }
  if (!Number.isFinite(firstAttemptAt) || !Number.isFinite(now)) {
    throw new RangeError('nextAttemptAt: firstAttemptAt and now must be finite epoch milliseconds')
  }
  if (retryAfterMs !== undefined && !(Number.isFinite(retryAfterMs) && retryAfterMs >= 0)) {
    throw new RangeError(`nextAttemptAt: retryAfterMs must be a finite number ≥ 0, got ${String(retryAfterMs)}`)
  }

  const deadline = firstAttemptAt + RETRY_WINDOW_MS
  if (now >= deadline) return undefined

  const backoff = equalJitterBackoff(attempt, random(), RETRY_BASE_DELAY_MS, RETRY_MAX_DELAY_MS)
  const wait = Math.max(backoff, retryAfterMs ?? 0)
  return Math.min(Math.round(now + wait), deadline)
}
