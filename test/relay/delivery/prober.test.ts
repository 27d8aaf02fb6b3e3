import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import type { BreakerPolicy } from '../../../src/relay/delivery/breaker-policy'
import { Prober } from '../../../src/relay/delivery/prober'
import type { Circuit, CircuitStore } from '../../../src/relay/store/circuits'

beforeEach(() => {
  vi.useFakeTimers({ now: 0 })
})
afterEach(() => {
  vi.useRealTimers()
})

const URL_A = 'https://a.example/'
const policy: BreakerPolicy = { failureThreshold: 3, probeInterval: 1000, maxProbeInterval: 8000, maxInFlightPerUrl: 2 }
const open = (nextProbeAt: number, probes = 0): Circuit => ({
  url: URL_A,
  state: 'open',
  failures: 3,
  probes,
  openedAt: 0,
  nextProbeAt,
  probeOwner: undefined,
  probeLeaseUntil: undefined,
  pausedAt: undefined,
  lastError: 'HTTP 503',
})

/** A prober over a store that hands the probe to this relay, with a worker that always has a delivery. */
function setup() {
  const calls: string[] = []
  const closed: number[] = []
  const circuits = {
    takeProbe: async (url: string, owner: string, now: number) => {
      calls.push(`take ${url} ${owner} at ${now}`)
      return { ...open(now), state: 'half-open' as const, probeOwner: owner }
    },
    succeed: async (url: string) => {
      calls.push(`succeed ${url}`)
      return { wasOpen: true, woken: 4 }
    },
    failProbe: async (url: string, _owner: string, nextProbeAt: number, error: string) => {
      calls.push(`fail ${url} next at ${nextProbeAt}: ${error}`)
      return open(nextProbeAt, 1)
    },
  } as unknown as CircuitStore
  const prober = new Prober({
    circuits,
    policy,
    random: () => 0,
    owner: 'me',
    now: Date.now,
    leaseTimeout: 30_000,
    routes: new Map([[URL_A, [{ source: 'web', destination: 'Webhooks' }]]]),
    circuit: () => open(1000),
    adopt: (circuit) => calls.push(`adopt ${circuit.state}`),
    closed: (_url, woken) => closed.push(woken),
    refresh: async () => {},
    probe: async (url) => {
      calls.push(`send probe to ${url}`)
      return true
    },
    settled: () => {},
  })
  return { prober, calls, closed }
}

describe('the prober', () => {
  it('takes the probe when it falls due and has the worker send one delivery there', async () => {
    const { prober, calls } = setup()
    prober.arm(open(1000))
    await vi.advanceTimersByTimeAsync(999)
    expect(calls).toEqual([])
    await vi.advanceTimersByTimeAsync(1)
    expect(calls).toEqual([`take ${URL_A} me at 1000`, 'adopt half-open', `send probe to ${URL_A}`])
    expect(prober.busy).toBe(false)
  })

  it('closes the circuit on an answer, and wakes its waiting deliveries', async () => {
    const { prober, calls, closed } = setup()
    await prober.settle(URL_A, 'up', { url: URL_A, status: 200, ms: 1 })
    expect(calls).toEqual([`succeed ${URL_A}`])
    expect(closed).toEqual([4])
  })

  it('opens it again on a failure, the next probe after a doubled wait', async () => {
    const { prober, calls } = setup()
    vi.setSystemTime(5000)
    await prober.settle(URL_A, 'down', { url: URL_A, status: 503, ms: 1 })
    // One failed probe: 2 × 1000 ms (no jitter with random() = 0).
    expect(calls).toEqual([`fail ${URL_A} next at 7000: HTTP 503`, 'adopt open'])
  })

  it('sends nothing once stopped', async () => {
    const { prober, calls } = setup()
    prober.arm(open(1000))
    prober.stop()
    await vi.advanceTimersByTimeAsync(10_000)
    expect(calls).toEqual([])
  })
})
