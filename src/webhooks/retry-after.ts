import { parseRetryAfter as parseHeader } from '../shared/retry'
import { RETRY_WINDOW_MS } from './retry-schedule'

/**
 * A `Retry-After` header as milliseconds from `now`: either delay-seconds (`120`) or an HTTP date
 * (`Wed, 21 Oct 2026 07:28:00 GMT`; a date in the past is 0). `undefined` when absent or invalid.
 * Clamped to the 4-hour retry window: a receiver's header must never yield a wait that is
 * infinite (400 nines of seconds) or beyond any attempt the schedule could still make.
 */
export function parseRetryAfter(value: string | string[] | undefined, now: number): number | undefined {
  return parseHeader(value, now, RETRY_WINDOW_MS)
}
