import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { Lane } from '../../../src/relay/delivery/lane'
import { dueDelivery } from '../fixtures/deliveries'

beforeEach(() => {
  vi.useFakeTimers()
})
afterEach(() => {
  vi.useRealTimers()
})

describe('a lane', () => {
  it('makes one pump of many wakes, on the next turn', async () => {
    const lane = new Lane('web')
    const pump = vi.fn()
    lane.schedule(pump)
    lane.schedule(pump)
    expect(lane.state.name).toBe('scheduled')
    expect(lane.busy).toBe(true)
    await vi.advanceTimersByTimeAsync(0)
    expect(pump).toHaveBeenCalledTimes(1)
    expect(lane.state.name).toBe('idle')
  })

  it('during a claim, turns a wake into one more pump once the claim ends', () => {
    const lane = new Lane('web')
    lane.claim()
    const pump = vi.fn()
    lane.schedule(pump)
    expect(lane.state).toEqual({ name: 'claiming', again: true })
    expect(lane.endClaim(undefined)).toBe(true)
    expect(lane.state.name).toBe('idle')
    expect(pump).not.toHaveBeenCalled()
  })

  it('sleeps until the next retry is due, and a wake cuts the sleep short', async () => {
    const lane = new Lane('web')
    const pump = vi.fn()
    lane.claim()
    expect(lane.endClaim({ ms: 1000, why: 'next-due', pump })).toBe(false)
    expect(lane.state).toMatchObject({ name: 'sleeping', why: 'next-due' })
    expect(lane.busy).toBe(false)
    await vi.advanceTimersByTimeAsync(999)
    expect(pump).not.toHaveBeenCalled()
    await vi.advanceTimersByTimeAsync(1)
    expect(pump).toHaveBeenCalledTimes(1)

    lane.claim()
    lane.endClaim({ ms: 1000, why: 'next-due', pump })
    const woken = vi.fn()
    lane.schedule(woken)
    await vi.advanceTimersByTimeAsync(5000)
    expect(woken).toHaveBeenCalledTimes(1)
    expect(pump).toHaveBeenCalledTimes(1) // the sleep's timer was cleared
  })

  it('backs off after failed claims, doubling, and starts over after one succeeds', () => {
    const lane = new Lane('web')
    expect([lane.claimFailed(), lane.claimFailed(), lane.claimFailed()]).toEqual([50, 100, 200])
    lane.claimSucceeded()
    expect(lane.claimFailed()).toBe(50)
  })

  it('hands out a claimed delivery of one destination for a probe, and its waiting ones on stop', async () => {
    const lane = new Lane('web')
    lane.buffer.push(dueDelivery(1), { ...dueDelivery(2), destination: 'Other' }, dueDelivery(3))
    expect(lane.take('Other')?.id).toBe(2)
    expect(lane.take('Missing')).toBeUndefined()
    const pump = vi.fn()
    lane.claim()
    lane.endClaim({ ms: 10, why: 'backing-off', pump })
    expect(lane.stop().map((d) => d.id)).toEqual([1, 3])
    expect(lane.buffer).toEqual([])
    expect(lane.state.name).toBe('idle')
    await vi.advanceTimersByTimeAsync(100)
    expect(pump).not.toHaveBeenCalled()
  })
})
