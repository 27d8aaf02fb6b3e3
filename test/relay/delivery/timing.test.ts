import { describe, expect, it } from 'vitest'
import { nextBackoff } from '../../../src/relay/delivery/timing'

describe('the back-off after a failed store operation', () => {
  it('doubles from 50 ms and stops at 30 s', () => {
    const waits: number[] = []
    let wait = 0
    for (let i = 0; i < 12; i++) {
      wait = nextBackoff(wait)
      waits.push(wait)
    }
    expect(waits).toEqual([50, 100, 200, 400, 800, 1600, 3200, 6400, 12_800, 25_600, 30_000, 30_000])
  })
})
