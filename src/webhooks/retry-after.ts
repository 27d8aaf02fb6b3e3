import { RETRY_WINDOW_MS } from './retry-schedule'

/**
 * A `Retry-After` header as milliseconds from `now`: either delay-seconds (`120`) or an HTTP date
 * (`Wed, 21 Oct 2026 07:28:00 GMT`; a date in the past is 0). `undefined` when absent or invalid.
 * Clamped to the 4-hour retry window: a receiver's header must never yield a wait that is
 * infinite (400 nines of seconds) or beyond any attempt the schedule could still make.
 */
export function parseRetryAfter(value: string | string[] | undefined, now: number): number | undefined {
  const text = (Array.isArray(value) ? value[0] : value)?.trim()
  if (text === undefined || text === '') return undefined
  if (/^\d+$/.test(text)) return Math.min(Number(text) * 1000, RETRY_WINDOW_MS)
  const date = Date.parse(text)
  // Date.parse accepts bare numbers like "-5" or "1.5"; an HTTP date always names a weekday.
  if (Number.isNaN(date) || !/[a-z]/i.test(text)) return undefined
  return Math.min(Math.max(0, date - now), RETRY_WINDOW_MS)
}
