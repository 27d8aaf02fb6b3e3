import { describe, expect, it } from 'vitest'
import {
  nextAttemptAt,
  RETRY_BASE_DELAY_MS,
  RETRY_MAX_DELAY_MS,
  RETRY_WINDOW_MS,
} from '../../src/webhooks/retry-schedule'

const firstAttemptAt = Date.UTC(2026, 0, 2, 3, 0, 0)
const lowest = (): number => 0
const highest = (): number => 0.999_999

describe('nextAttemptAt', () => {
  it('waits between half and all of 1 s after the first failure (equal jitter)', () => {
    const now = firstAttemptAt
    expect(nextAttemptAt({ attempt: 1, firstAttemptAt, now }, lowest)).toBe(now + 500)
    expect(nextAttemptAt({ attempt: 1, firstAttemptAt, now }, () => 0.5)).toBe(now + 750)
    expect(nextAttemptAt({ attempt: 1, firstAttemptAt, now }, highest)).toBe(now + 1000)
  })

  it('doubles the wait with each failed attempt', () => {
    const now = firstAttemptAt + 60_000
    const waits = [1, 2, 3, 4, 5].map((attempt) => nextAttemptAt({ attempt, firstAttemptAt, now }, highest)! - now)
    expect(waits).toEqual([1000, 2000, 4000, 8000, 16_000])
  })

  it('caps the wait at 10 minutes, however many attempts failed', () => {
    const now = firstAttemptAt + 60_000
    for (const attempt of [11, 12, 40, 1000, Number.MAX_SAFE_INTEGER]) {
      expect(nextAttemptAt({ attempt, firstAttemptAt, now }, highest)! - now).toBe(RETRY_MAX_DELAY_MS)
      expect(nextAttemptAt({ attempt, firstAttemptAt, now }, lowest)! - now).toBe(RETRY_MAX_DELAY_MS / 2)
    }
    expect(RETRY_BASE_DELAY_MS * 2 ** 9).toBeLessThan(RETRY_MAX_DELAY_MS) // attempt 10 is still below the cap
  })

  it('honours Retry-After when it asks for longer than the backoff', () => {
    const now = firstAttemptAt
    expect(nextAttemptAt({ attempt: 1, firstAttemptAt, now, retryAfterMs: 120_000 }, highest)).toBe(now + 120_000)
  })

  it('keeps the backoff when Retry-After asks for less (a Retry-After: 0 cannot make it hammer)', () => {
    const now = firstAttemptAt
    expect(nextAttemptAt({ attempt: 5, firstAttemptAt, now, retryAfterMs: 0 }, highest)).toBe(now + 16_000)
  })

  it('clamps a Retry-After past the window to the end of the window', () => {
    const now = firstAttemptAt + 60_000
    expect(nextAttemptAt({ attempt: 3, firstAttemptAt, now, retryAfterMs: 24 * 3_600_000 }, highest)).toBe(
      firstAttemptAt + RETRY_WINDOW_MS,
    )
  })

  it('never schedules past the 4-hour window: the last attempt falls on its end', () => {
    const now = firstAttemptAt + RETRY_WINDOW_MS - 1000
    expect(nextAttemptAt({ attempt: 30, firstAttemptAt, now }, highest)).toBe(firstAttemptAt + RETRY_WINDOW_MS)
  })

  it('gives up once the window is spent', () => {
    expect(RETRY_WINDOW_MS).toBe(4 * 60 * 60 * 1000)
    expect(nextAttemptAt({ attempt: 40, firstAttemptAt, now: firstAttemptAt + RETRY_WINDOW_MS })).toBeUndefined()
    expect(nextAttemptAt({ attempt: 2, firstAttemptAt, now: firstAttemptAt + RETRY_WINDOW_MS + 1 })).toBeUndefined()
  })

  it('keeps retrying within the window: a whole simulated outage ends on the deadline', () => {
    let now = firstAttemptAt
    let attempt = 0
    const times: number[] = []
    for (;;) {
      attempt += 1
      const next = nextAttemptAt({ attempt, firstAttemptAt, now })
      if (next === undefined) break
      expect(next).toBeGreaterThan(now)
      times.push(next)
      now = next
    }
    expect(times.at(-1)).toBe(firstAttemptAt + RETRY_WINDOW_MS)
    // 10 doubling waits (~17 min at most), then 5–10 min each for the rest of the 4 hours.
    expect(attempt).toBeGreaterThan(25)
    expect(attempt).toBeLessThan(60)
  })

  it.each([0, -1, 1.5, Number.NaN])('refuses the attempt number %s', (attempt) => {
    expect(() => nextAttemptAt({ attempt, firstAttemptAt, now: firstAttemptAt })).toThrow(RangeError)
  })

  it('refuses times and Retry-After that are not finite', () => {
    expect(() => nextAttemptAt({ attempt: 1, firstAttemptAt: Number.NaN, now: firstAttemptAt })).toThrow(/finite epoch/)
    expect(() => nextAttemptAt({ attempt: 1, firstAttemptAt, now: firstAttemptAt, retryAfterMs: -5 })).toThrow(
      /retryAfterMs/,
    )
  })
})
