// After a failed store operation (a full disk, a lost connection), it is tried again after this
// long, doubling up to the maximum: never a hot loop against a store that is down.
const STORE_RETRY_MIN_MS = 50
const STORE_RETRY_MAX_MS = 30_000

/** The next wait after a failed store operation, ms: doubling from 50 ms, capped at 30 s. */
export function nextBackoff(previousMs: number): number {
  return Math.min(STORE_RETRY_MAX_MS, Math.max(STORE_RETRY_MIN_MS, 2 * previousMs))
}
