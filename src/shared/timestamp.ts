/**
 * Whether `value` is an ISO 8601 date-time string with a time zone naming a real instant:
 * `YYYY-MM-DDTHH:mm`, then optionally `:ss` and a fraction of a second, then `Z` or an offset
 * `±HH:mm` (or `±HHmm`); `T` and `Z` in either case. A string without a zone would be read in the
 * server's local time, so it is refused rather than guessed; so is a day that does not exist
 * (February 30th), which `Date.parse` would roll over into March, and an instant an offset
 * moves out of the years 0000–9999 (`0000-01-01T00:00+01:00` is in year −1).
 *
 * One scan of the characters, no regular expression and no `Date`: every message a relay ingests
 * or delivers is checked, and the regular expression, its captures and `Date.parse` cost ten times
 * the scan.
 */
export function isIsoTimestamp(value: string): boolean {
  const length = value.length
  if (length < 17) return false
  const year = digits(value, 0, 4)
  const month = digits(value, 5, 2)
  const day = digits(value, 8, 2)
  const hour = digits(value, 11, 2)
  const minute = digits(value, 14, 2)
  if (
    year < 0 ||
    month < 1 ||
    month > 12 ||
    day < 1 ||
    day > daysInMonth(year, month) ||
    hour < 0 ||
    hour > 23 ||
    minute < 0 ||
    minute > 59 ||
    value.charCodeAt(4) !== DASH ||
    value.charCodeAt(7) !== DASH ||
    (value.charCodeAt(10) | LOWER) !== LOWER_T ||
    value.charCodeAt(13) !== COLON
  ) {
    return false
  }
  let at = 16
  if (value.charCodeAt(at) === COLON) {
    const second = digits(value, at + 1, 2)
    if (second < 0 || second > 59) return false
    at += 3
    if (value.charCodeAt(at) === DOT) {
      const fractionStart = ++at
      while (isDigit(value.charCodeAt(at))) at++
      if (at === fractionStart) return false
    }
  }
  if (!isZone(value, at)) return false
  // Only at the calendar's two ends can an offset move the instant out of the years 0000–9999,
  // which toISOString then writes as ±YYYYYY, a form no reader of these timestamps takes back.
  return (year !== 0 && year !== 9999) || new Date(value).toISOString().length === CANONICAL_LENGTH
}

// Whether `value` from `at` to its end is `Z`, `±HH:mm` or `±HHmm` (hours to 23, minutes to 59).
function isZone(value: string, at: number): boolean {
  const sign = value.charCodeAt(at)
  if ((sign | LOWER) === LOWER_Z) return at + 1 === value.length
  if (sign !== PLUS && sign !== MINUS) return false
  const hours = digits(value, at + 1, 2)
  const minutesAt = value.charCodeAt(at + 3) === COLON ? at + 4 : at + 3
  const minutes = digits(value, minutesAt, 2)
  return hours >= 0 && hours <= 23 && minutes >= 0 && minutes <= 59 && minutesAt + 2 === value.length
}

// The number written by the `count` ASCII digits of `value` at `at`, or -1 if any is not one.
function digits(value: string, at: number, count: number): number {
  let n = 0
  for (let i = at; i < at + count; i++) {
    const c = value.charCodeAt(i)
    if (!isDigit(c)) return -1
    n = n * 10 + (c - ZERO)
  }
  return n
}

function isDigit(code: number): boolean {
  return code >= ZERO && code <= ZERO + 9
}

// Days in `month` (1–12) of `year` in the proleptic Gregorian calendar, as Date does.
function daysInMonth(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31
}

const ZERO = 0x30
const DASH = 0x2d
const COLON = 0x3a
const DOT = 0x2e
const PLUS = 0x2b
const MINUS = 0x2d
// `T` and `Z` in either case: ORing 0x20 lowers an ASCII letter.
const LOWER = 0x20
const LOWER_T = 0x74
const LOWER_Z = 0x7a

/**
 * A timestamp as ISO 8601 UTC with milliseconds (`2026-01-02T03:04:05.678Z`), from a `Date` or
 * an ISO 8601 string. Returns `undefined` for anything that does not name a real instant within
 * the years 0000–9999 ({@link isIsoTimestamp}; a `Date` of year 10000 too).
 */
export function toUtcTimestamp(value: unknown): string | undefined {
  if (value instanceof Date) return inFourDigitYears(value)
  if (typeof value !== 'string' || !isIsoTimestamp(value)) return undefined
  // Already in the result's form (every timestamp the relay stores is): nothing to convert.
  if (
    value.length === CANONICAL_LENGTH &&
    value.charCodeAt(10) === UPPER_T &&
    value.charCodeAt(19) === DOT &&
    value.charCodeAt(23) === UPPER_Z
  ) {
    return value
  }
  return new Date(value).toISOString()
}

// What `toISOString()` writes for the years 0000–9999.
const CANONICAL_LENGTH = 24
const UPPER_T = 0x54
const UPPER_Z = 0x5a

function inFourDigitYears(date: Date): string | undefined {
  if (Number.isNaN(date.getTime())) return undefined
  const iso = date.toISOString()
  return iso.length === CANONICAL_LENGTH ? iso : undefined
}
