import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { PARK_RECHECK_MS, Parking } from '../../../src/relay/delivery/parking'
import type { CircuitStore, ParkRequest } from '../../../src/relay/store/circuits'

beforeEach(() => {
  vi.useFakeTimers({ now: 0 })
})
afterEach(() => {
  vi.useRealTimers()
})

/** Parking over a store that parks what `accept` lets through (and fails while `failing`). */
function setup(accept: (id: number) => boolean = () => true) {
  const requests: ParkRequest[] = []
  const host = { parked: [] as number[], refused: [] as number[], failing: false }
  const circuits = {
    park: async (request: ParkRequest) => {
      if (host.failing) throw new Error('down')
      requests.push(request)
      return request.ids.filter(accept)
    },
  } as unknown as CircuitStore
  const parking = new Parking(circuits, 4 * 3600_000, {
    owner: 'me',
    now: Date.now,
    parked: (ids) => host.parked.push(...ids),
    refused: (ids) => host.refused.push(...ids),
    settled: () => {},
  })
  return { parking, requests, host }
}

describe('parking', () => {
  it('parks the deliveries of the same URLs and reason in one write, with the window and recheck', async () => {
    const { parking, requests, host } = setup()
    parking.add(1, ['https://a.example/'], 'circuit open')
    parking.add(2, ['https://a.example/'], 'circuit open')
    parking.add(3, ['https://b.example/'], 'circuit open')
    await vi.advanceTimersByTimeAsync(5)
    expect(requests.map((r) => [r.ids, r.urls])).toEqual([
      [[1, 2], ['https://a.example/']],
      [[3], ['https://b.example/']],
    ])
    expect(requests[0]).toMatchObject({ owner: 'me', until: 5 + PARK_RECHECK_MS, window: 4 * 3600_000 })
    expect(host.parked).toEqual([1, 2, 3])
    expect(parking.busy).toBe(false)
  })

  it('hands back the deliveries the store would not park (a circuit closed meanwhile)', async () => {
    const { parking, host } = setup((id) => id !== 2)
    parking.add(1, ['https://a.example/'], 'circuit open')
    parking.add(2, ['https://a.example/'], 'circuit open')
    await parking.flush()
    expect(host.parked).toEqual([1])
    expect(host.refused).toEqual([2])
  })

  it('keeps what it could not write ahead of what came since, and writes it after a back-off', async () => {
    const { parking, requests, host } = setup()
    host.failing = true
    parking.add(1, ['https://a.example/'], 'circuit open')
    await vi.advanceTimersByTimeAsync(5)
    parking.add(2, ['https://a.example/'], 'circuit open')
    host.failing = false
    await vi.advanceTimersByTimeAsync(50)
    expect(requests.map((r) => r.ids)).toEqual([[1, 2]])
  })
})
