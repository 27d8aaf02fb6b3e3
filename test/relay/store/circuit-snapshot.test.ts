import { describe, expect, it } from 'vitest'
import { snapshotOf } from '../../../src/relay/store/circuit-snapshot'

describe('a circuit’s snapshot', () => {
  it('shows a URL without a row as closed, and never a query string', () => {
    expect(snapshotOf('https://a.example/in?token=secret', undefined, 2)).toEqual({
      url: 'https://a.example/in',
      state: 'closed',
      failures: 0,
      inFlight: 2,
    })
  })

  it('shows an open circuit with when it opened, its next probe and its last error', () => {
    const circuit = {
      url: 'https://a.example/',
      state: 'open' as const,
      failures: 5,
      probes: 1,
      openedAt: 1000,
      nextProbeAt: 3000,
      probeOwner: undefined,
      probeLeaseUntil: undefined,
      pausedAt: undefined,
      lastError: 'HTTP 503',
    }
    expect(snapshotOf(circuit.url, circuit, 0)).toEqual({
      url: 'https://a.example/',
      state: 'open',
      failures: 5,
      openedAt: 1000,
      nextProbeAt: 3000,
      inFlight: 0,
      lastError: 'HTTP 503',
    })
  })
})
