// ISO 8601 date-time with an explicit zone. A string without a zone would be read in the
// server's local time, so it is refused rather than guessed.
const ISO_DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?(?:Z|[+-](\d{2}):?(\d{2}))$/i

/** Whether `value` is an ISO 8601 date-time string with a time zone naming a real instant. */
export function isIsoTimestamp(value: string): boolean {
  const match = ISO_DATE_TIME.exec(value)
  if (match === null) return false
  const [year, month, day, hour, minute, second = 0, zoneHour = 0, zoneMinute = 0] = match
    .slice(1)
    .map((part) => (part === undefined ? undefined : Number(part))) as number[]
  // Date.parse rolls a day that does not exist over (February 30th becomes March 2nd): check
  // each field's range, so such a date is refused instead of silently moved.
  const daysInMonth = new Date(Date.UTC(year!, month!, 0)).getUTCDate()
  return (
    month! >= 1 &&
    month! <= 12 &&
    day! >= 1 &&
    day! <= daysInMonth &&
    hour! <= 23 &&
    minute! <= 59 &&
    second <= 59 &&
    zoneHour <= 23 &&
    zoneMinute <= 59 &&
    !Number.isNaN(Date.parse(value))
  )
}

/**
 * A timestamp as ISO 8601 UTC with milliseconds (`2026-01-02T03:04:05.678Z`), from a `Date` or
 * an ISO 8601 string. Returns `undefined` for anything that does not name a real instant.
 */
export function toUtcTimestamp(value: unknown): string | undefined {
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? undefined : value.toISOString()
  if (typeof value === 'string' && isIsoTimestamp(value)) return new Date(value).toISOString()
  return undefined
}
