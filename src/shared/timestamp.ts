// ISO 8601 date-time with an explicit zone. A string without a zone would be read in the
// server's local time, so it is refused rather than guessed.
const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})$/i

/** Whether `value` is an ISO 8601 date-time string with a time zone naming a real instant. */
export function isIsoTimestamp(value: string): boolean {
  return ISO_DATE_TIME.test(value) && !Number.isNaN(Date.parse(value))
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
