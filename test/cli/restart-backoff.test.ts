import { describe, expect, it } from 'vitest'
import {
  FIRST_RESTART_DELAY_MS,
  HEALTHY_AFTER_MS,
  MAX_RESTART_DELAY_MS,
  RestartBackoff,
} from '../../src/cli/workers/restart-backoff'

// The wait before the primary starts a dead worker again, on an injected clock.

describe('RestartBackoff', () => {
  it('doubles while a worker keeps dying soon after it started, up to the cap', () => {
    let now = 0
    const backoff = new RestartBackoff(() => now)
    const waits: number[] = []
    for (let death = 0; death < 12; death++) {
      backoff.started()
      now += 50
      waits.push(backoff.next())
    }
    expect(waits.slice(0, 4)).toEqual([
      FIRST_RESTART_DELAY_MS,
      FIRST_RESTART_DELAY_MS * 2,
      FIRST_RESTART_DELAY_MS * 4,
      FIRST_RESTART_DELAY_MS * 8,
    ])
    expect(waits.at(-1)).toBe(MAX_RESTART_DELAY_MS)
    expect(Math.max(...waits)).toBe(MAX_RESTART_DELAY_MS)
  })

  it('keeps doubling for a worker that dies before it ever listens (a crash loop)', () => {
    const backoff = new RestartBackoff(() => 0)
    expect([backoff.next(), backoff.next(), backoff.next()]).toEqual([
      FIRST_RESTART_DELAY_MS,
      FIRST_RESTART_DELAY_MS * 2,
      FIRST_RESTART_DELAY_MS * 4,
    ])
  })

  it('starts again from the first wait once a worker stayed up long enough', () => {
    let now = 0
    const backoff = new RestartBackoff(() => now)
    backoff.next()
    backoff.next()
    backoff.started()
    now += HEALTHY_AFTER_MS
    expect(backoff.next()).toBe(FIRST_RESTART_DELAY_MS)
  })
})
