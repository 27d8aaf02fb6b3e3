import { describe, expect, it } from 'vitest'
import { parseRetryAfter } from '../../src/webhooks/retry-after'

const now = Date.UTC(2026, 9, 21, 7, 28, 0)

describe('parseRetryAfter', () => {
  it.each<[string | string[] | undefined, number | undefined]>([
    ['120', 120_000],
    ['0', 0],
    [' 7 ', 7000],
    [['30', '60'], 30_000],
    ['Wed, 21 Oct 2026 07:30:00 GMT', 120_000],
    ['Wed, 21 Oct 2026 07:00:00 GMT', 0], // in the past: retry now
    [undefined, undefined],
    ['', undefined],
    ['-5', undefined],
    ['1.5', undefined],
    ['soon', undefined],
    // A receiver cannot ask for more than the 4-hour window, nor for an infinite wait.
    ['86400', 4 * 60 * 60 * 1000],
    ['9'.repeat(400), 4 * 60 * 60 * 1000],
    ['Wed, 21 Oct 2099 07:30:00 GMT', 4 * 60 * 60 * 1000],
  ])('%j → %s ms', (value, expected) => {
    expect(parseRetryAfter(value, now)).toBe(expected)
  })
})
