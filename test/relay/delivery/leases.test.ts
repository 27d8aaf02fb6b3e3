import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { Leases, newLeaseOwner } from '../../../src/relay/delivery/leases'

beforeEach(() => {
  vi.useFakeTimers({ now: 0 })
})
afterEach(() => {
  vi.useRealTimers()
})

/** A store that notes renewals and releases (and fails them while `failing`). */
function fakeStore() {
  const calls = { renewed: [] as { ids: number[]; leaseMs: number }[], released: [] as number[][], failing: false }
  return {
    calls,
    store: {
      renew: async (_owner: string, ids: readonly number[], leaseMs: number) => {
        if (calls.failing) throw new Error('down')
        calls.renewed.push({ ids: [...ids], leaseMs })
      },
      release: async (_owner: string, ids: readonly number[]) => {
        if (calls.failing) throw new Error('down')
        calls.released.push([...ids])
      },
    },
  }
}

describe('the leases a relay holds', () => {
  it('are renewed every third of the lease timeout while any is held, for a length (not to an instant of this relay’s clock), with the probes', async () => {
    const { store, calls } = fakeStore()
    const probes: number[] = []
    const leases = new Leases({
      store,
      owner: 'me',
      leaseTimeout: 3000,
      now: Date.now,
      renewAlso: async (until) => void probes.push(until),
    })
    leases.hold([1, 2])
    await vi.advanceTimersByTimeAsync(999)
    expect(calls.renewed).toEqual([])
    await vi.advanceTimersByTimeAsync(1)
    expect(calls.renewed).toEqual([{ ids: [1, 2], leaseMs: 3000 }])
    expect(probes).toEqual([4000])
    leases.settled([1])
    await vi.advanceTimersByTimeAsync(1000)
    expect(calls.renewed.at(-1)).toEqual({ ids: [2], leaseMs: 3000 })
    leases.settled([2])
    await vi.advanceTimersByTimeAsync(10_000)
    expect(calls.renewed).toHaveLength(2)
    expect(leases.size).toBe(0)
  })

  it('keep renewing after a failed renewal', async () => {
    const { store, calls } = fakeStore()
    const leases = new Leases({ store, owner: 'me', leaseTimeout: 3000, now: Date.now })
    calls.failing = true
    leases.hold([1])
    await vi.advanceTimersByTimeAsync(1000)
    calls.failing = false
    await vi.advanceTimersByTimeAsync(1000)
    expect(calls.renewed).toEqual([{ ids: [1], leaseMs: 3000 }])
  })

  it('give back what was never started, even if the store fails, and stop renewing on stop', async () => {
    const { store, calls } = fakeStore()
    const leases = new Leases({ store, owner: 'me', leaseTimeout: 3000, now: Date.now })
    leases.hold([1, 2, 3])
    await leases.release([1, 2])
    expect(calls.released).toEqual([[1, 2]])
    calls.failing = true
    await expect(leases.release([3])).resolves.toBeUndefined()
    expect(leases.size).toBe(0)
    leases.hold([4])
    leases.stop()
    await vi.advanceTimersByTimeAsync(10_000)
    expect(calls.renewed).toEqual([])
  })
})

describe('newLeaseOwner', () => {
  it('gives each relay its own short id (what every claim writes into the row)', () => {
    const owners = Array.from({ length: 10_000 }, newLeaseOwner)
    expect(new Set(owners).size).toBe(owners.length)
    for (const owner of owners.slice(0, 100)) expect(owner).toMatch(/^[A-Za-z0-9_-]{12}$/)
  })
})
