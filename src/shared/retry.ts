// The retry arithmetic both sides share: the SDK (batches to the tracking API) and the Webhooks
// destination (deliveries to receivers) each keep their own rule — which failures to retry, how
// many times, for how long — in one file, built from these pieces.

/** setTimeout's largest delay (2³¹ − 1 ms); a longer one fires at once. */
export const MAX_TIMER_MS = 2_147_483_647

/** `ms` as a delay setTimeout honours: never negative, never past {@link MAX_TIMER_MS}. */
export function clampTimerDelay(ms: number): number {
  return Math.max(0, Math.min(ms, MAX_TIMER_MS))
}

/**
 * The wait before retry number `attempt` (1 for the first): `baseMs × 2^(attempt − 1)`, capped
 * at `maxMs`, then "equal jitter" — a random point in its upper half — so that clients recovering
 * from one outage spread out, yet none retries almost at once. `random` is in [0, 1).
 */
export function equalJitterBackoff(attempt: number, random: number, baseMs: number, maxMs: number): number {
  // 2 ** 30 already exceeds any cap; limiting the exponent keeps the number finite.
  const ceiling = Math.min(maxMs, baseMs * 2 ** Math.min(Math.max(0, attempt - 1), 30))
  return Math.round(ceiling / 2 + (ceiling / 2) * random)
}

/**
 * A `Retry-After` header as milliseconds from `now`: delay-seconds (`120`) or an HTTP date
 * (`Wed, 21 Oct 2026 07:28:00 GMT`; one in the past is 0), at most `maxMs`. `undefined` when
 * absent or unreadable. The cap matters: a header of 400 nines must never become an endless wait.
 */
export function parseRetryAfter(
  value: string | readonly string[] | undefined,
  now: number,
  maxMs: number = Number.POSITIVE_INFINITY,
): number | undefined {
  const text = (typeof value === 'string' ? value : value?.[0])?.trim()
  if (text === undefined || text === '') return undefined
  if (/^\d+$/.test(text)) return Math.min(Number(text) * 1000, maxMs)
  // An HTTP date names its day or month in letters; Date.parse alone would read "-1" as a year.
  if (!/[a-z]/i.test(text)) return undefined
  const date = Date.parse(text)
  if (Number.isNaN(date)) return undefined
  return Math.min(Math.max(0, date - now), maxMs)
}

/** A `Retry-After` worth honouring: a finite wait ≥ 0, ms; `undefined` for anything else (NaN, ∞, < 0). */
export function validRetryAfter(ms: number | undefined): number | undefined {
  return ms !== undefined && Number.isFinite(ms) && ms >= 0 ? ms : undefined
}
