import { describe, expect, it } from 'vitest'
import { isIsoTimestamp } from '../../src/shared/timestamp'

// The timestamps a message may carry (the SDK's `timestamp`, the relay's wire messages): ISO 8601
// date-times with a zone, naming a day that exists. Everything else is refused, never guessed.
describe('isIsoTimestamp', () => {
  it.each([
    '2026-01-02T03:04:05.678Z',
    '2026-01-02T03:04:05Z',
    '2026-01-02T03:04Z',
    '2026-01-02t03:04:05z',
    '2026-01-02T03:04:05.1+02:00',
    '2026-01-02T03:04:05.123456789-0530',
    '2026-01-02T03:04+23:59',
    '2024-02-29T12:00:00Z',
    '2000-02-29T12:00:00Z',
    '0000-02-29T00:00:00Z',
    '9999-12-31T23:59:59.999Z',
  ])('accepts %s', (value) => {
    expect(isIsoTimestamp(value)).toBe(true)
  })

  it.each([
    ['no zone', '2026-01-02T03:04:05'],
    ['a date alone', '2026-01-02'],
    ['a space for T', '2026-01-02 03:04:05Z'],
    ['a fraction without seconds', '2026-01-02T03:04.5Z'],
    ['a dot without digits', '2026-01-02T03:04:05.Z'],
    ['something after the zone', '2026-01-02T03:04:05Zx'],
    ['an offset without minutes', '2026-01-02T03:04:05+02'],
    ['an offset past 23 hours', '2026-01-02T03:04:05+24:00'],
    ['an offset past 59 minutes', '2026-01-02T03:04:05+02:60'],
    ['month 13', '2026-13-01T00:00:00Z'],
    ['month 0', '2026-00-01T00:00:00Z'],
    ['day 0', '2026-01-00T00:00:00Z'],
    ['February 30th', '2026-02-30T00:00:00Z'],
    ['February 29th of a common year', '2026-02-29T00:00:00Z'],
    ['February 29th of 1900', '1900-02-29T00:00:00Z'],
    ['April 31st', '2026-04-31T00:00:00Z'],
    ['hour 24', '2026-01-01T24:00:00Z'],
    ['minute 60', '2026-01-01T23:60:00Z'],
    ['second 60', '2026-01-01T23:59:60Z'],
    ['a five-digit year', '12026-01-01T00:00:00Z'],
    ['non-ASCII digits', '2026-01-0\u0661T00:00:00Z'],
    ['an empty string', ''],
  ])('refuses %s', (_, value) => {
    expect(isIsoTimestamp(value)).toBe(false)
  })
})
