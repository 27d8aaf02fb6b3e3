import { describe, expect, it } from 'vitest'
import { clampTimerDelay, equalJitterBackoff, MAX_TIMER_MS, parseRetryAfter } from '../../src/shared/retry'

const NOW = Date.parse('2026-10-21T07:28:00.000Z')

describe('parseRetryAfter', () => {
  it.each([
    ['120', undefined, 120_000],
    [' 7 ', undefined, 7000],
    ['0', undefined, 0],
    ['Wed, 21 Oct 2026 07:28:30 GMT', undefined, 30_000],
    ['Wed, 21 Oct 2026 07:27:00 GMT', undefined, 0], // in the past
    [['5', '9'], undefined, 5000], // a repeated header: the first
    ['9'.repeat(400), 3_600_000, 3_600_000], // clamped, never Infinity
    ['Wed, 21 Oct 2099 07:28:00 GMT', 60_000, 60_000],
    ['-1', undefined, undefined],
    ['1.5', undefined, undefined],
    ['soon', undefined, undefined],
    ['', undefined, undefined],
    [undefined, undefined, undefined],
  ] as const)('%j (cap %s) → %s', (value, cap, expected) => {
    expect(parseRetryAfter(value, NOW, cap)).toBe(expected)
  })
})

describe('equalJitterBackoff', () => {
  it.each([
    [1, 0, 500],
    [1, 0.999_999, 1000],
    [2, 0, 1000],
    [4, 0.5, 6000],
    [30, 0, 5000], // capped at 10 s, then jittered
    [1e9, 0.5, 7500], // a huge attempt count stays finite
  ])('attempt %d, random %d → %d ms (base 1 s, cap 10 s)', (attempt, random, expected) => {
    expect(equalJitterBackoff(attempt, random, 1000, 10_000)).toBe(expected)
  })
})

describe('clampTimerDelay', () => {
  it.each([
    [-5, 0],
    [0, 0],
    [1234, 1234],
    [MAX_TIMER_MS + 1, MAX_TIMER_MS],
    [Number.POSITIVE_INFINITY, MAX_TIMER_MS],
  ])('%d → %d', (ms, expected) => {
    expect(clampTimerDelay(ms)).toBe(expected)
  })
})
