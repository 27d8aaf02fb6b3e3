import { describe, expect, it } from 'vitest'
import { isIsoTimestamp, toUtcTimestamp } from '../../src/shared/timestamp'

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

// The check as it was written before the scan (a regular expression, then Date), with its one
// mistake fixed (Date.UTC reads the years 0–99 as 1900–1999): the scan must judge alike.
const ISO_DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?(?:Z|[+-](\d{2}):?(\d{2}))$/i
function referenceIsIsoTimestamp(value: string): boolean {
  const match = ISO_DATE_TIME.exec(value)
  if (match === null) return false
  const [year, month, day, hour, minute, second = 0, zoneHour = 0, zoneMinute = 0] = match
    .slice(1)
    .map((part) => (part === undefined ? undefined : Number(part))) as number[]
  const lastDay = new Date(0)
  lastDay.setUTCFullYear(year!, month!, 0)
  return (
    month! >= 1 &&
    month! <= 12 &&
    day! >= 1 &&
    day! <= lastDay.getUTCDate() &&
    hour! <= 23 &&
    minute! <= 59 &&
    second <= 59 &&
    zoneHour <= 23 &&
    zoneMinute <= 59 &&
    !Number.isNaN(Date.parse(value)) &&
    // Since this round: an instant an offset moves out of the years 0000–9999 is refused too.
    new Date(value).toISOString().length === 24
  )
}

// Strings near valid timestamps: a valid one with a few characters replaced, dropped or added,
// from a seeded generator (the same strings every run).
function* nearTimestamps(count: number): Generator<string> {
  let seed = 21
  const random = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2147483648
    return seed % n
  }
  const bases = ['2026-02-28T23:59:59.999Z', '0000-02-29T00:00+01:00', '9999-12-31T23:59:59-0530', '2024-02-29t12:00z']
  const alphabet = '0123456789-:.TtZz+ 9x'
  for (let i = 0; i < count; i++) {
    const chars = [...bases[random(bases.length)]!]
    for (let edits = 1 + random(3); edits > 0; edits--) {
      const at = random(chars.length + 1)
      const char = alphabet[random(alphabet.length)]!
      const edit = random(3)
      if (edit === 0) chars[at] = char
      else if (edit === 1) chars.splice(at, 1)
      else chars.splice(at, 0, char)
    }
    yield chars.join('')
  }
}

describe('isIsoTimestamp against the regular expression and Date', () => {
  it('judges 50,000 strings near valid timestamps alike', () => {
    const disagreements: string[] = []
    for (const value of nearTimestamps(50_000)) {
      if (isIsoTimestamp(value) !== referenceIsIsoTimestamp(value)) disagreements.push(value)
    }
    expect(disagreements).toEqual([])
  })
})

describe('toUtcTimestamp', () => {
  it.each([
    ['2026-01-02T03:04:05.678Z', '2026-01-02T03:04:05.678Z'],
    ['2026-01-02t03:04:05.678z', '2026-01-02T03:04:05.678Z'],
    ['2026-01-02T03:04+02:00', '2026-01-02T01:04:00.000Z'],
    ['2026-01-02T03:04:05.1234-0530', '2026-01-02T08:34:05.123Z'],
  ])('writes %s as %s', (value, expected) => {
    expect(toUtcTimestamp(value)).toBe(expected)
  })

  it.each(['0000-01-01T00:00+01:00', '0000-01-01T00:59:59.999+01:00', '9999-12-31T23:30-01:00'])(
    'is refused, by isIsoTimestamp too, for %s: an offset moves it out of the years 0000–9999',
    (value) => {
      expect(isIsoTimestamp(value)).toBe(false)
      expect(toUtcTimestamp(value)).toBeUndefined()
    },
  )

  it('refuses an instant an offset moves out of the years 0000–9999, rather than write ±YYYYYY', () => {
    expect(toUtcTimestamp('0000-01-01T00:00+01:00')).toBeUndefined()
    expect(toUtcTimestamp('9999-12-31T23:30-01:00')).toBeUndefined()
    expect(toUtcTimestamp(new Date(Date.UTC(10000, 0, 1)))).toBeUndefined()
    expect(toUtcTimestamp('0000-01-01T01:00+01:00')).toBe('0000-01-01T00:00:00.000Z')
  })

  it('never throws, and writes only what isIsoTimestamp accepts back, for strings near timestamps', () => {
    for (const value of nearTimestamps(20_000)) {
      const written = toUtcTimestamp(value)
      if (written === undefined) continue
      expect({ value, accepted: isIsoTimestamp(written) }).toEqual({ value, accepted: true })
      expect(Date.parse(written)).toBe(Date.parse(value))
    }
  })
})
