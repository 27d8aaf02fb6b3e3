import { isIsoTimestamp } from '../../shared/timestamp'

/**
 * When a message's event happened, as the relay delivers it (docs/ingest.md, "Time"):
 *
 * 1. a `timestamp` the client gave is kept as given (historical import);
 * 2. else `originalTimestamp` (the device's clock when the call was made) corrected by the
 *    device's clock skew, known from when it says it sent the request: `receivedAt − (sentAt −
 *    originalTimestamp)`. `sentAt` is the batch's, or else the message's own;
 * 3. else `originalTimestamp` as it is;
 * 4. else `receivedAt`.
 *
 * An `originalTimestamp` or `sentAt` that is not an ISO 8601 date-time with a zone is ignored (the
 * next rule applies), never a reason to refuse the message; so is a correction that lands outside
 * the years 0000–9999. `timestamp` must already be valid (message validation refuses it otherwise).
 */
export function eventTime(message: Record<string, unknown>, batchSentAt: unknown, receivedAt: Date): string {
  const given = message['timestamp']
  if (typeof given === 'string') return given
  const original = instant(message['originalTimestamp'])
  if (original === undefined) return receivedAt.toISOString()
  const sent = instant(batchSentAt) ?? instant(message['sentAt'])
  const corrected = sent === undefined ? undefined : receivedAt.getTime() - (sent - original)
  return new Date(corrected !== undefined && isFourDigitYear(corrected) ? corrected : original).toISOString()
}

/** Epoch milliseconds of an ISO 8601 date-time with a zone; `undefined` for anything else. */
function instant(value: unknown): number | undefined {
  return typeof value === 'string' && isIsoTimestamp(value) ? Date.parse(value) : undefined
}

// What `toISOString()` writes with a four-digit year, the only form timestamps are accepted in.
const FIRST_INSTANT = Date.parse('0000-01-01T00:00:00.000Z')
const LAST_INSTANT = Date.parse('9999-12-31T23:59:59.999Z')

function isFourDigitYear(epochMs: number): boolean {
  return epochMs >= FIRST_INSTANT && epochMs <= LAST_INSTANT
}
