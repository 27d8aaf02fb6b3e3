import { describe, expect, it } from 'vitest'
import { probeDelay, verdictOf } from '../../../src/relay/delivery/breaker-policy'
import { RelayConfigError } from '../../../src/relay/index'
import { validateRelayOptions } from '../../../src/relay/config/validate'

const sources = [
  { name: 'web', writeKey: 'wk', destinations: { Webhooks: { webhooks: [{ url: 'https://a.example/' }] } } },
]

describe('the breaker options', () => {
  it('have defaults', () => {
    expect(validateRelayOptions({ sources })).toMatchObject({
      breaker: { failureThreshold: 5, probeInterval: 1000, maxProbeInterval: 5000 },
      maxInFlightPerUrl: 32,
    })
  })

  it('take what is given, keeping the defaults of the rest', () => {
    const resolved = validateRelayOptions({ sources, breaker: { failureThreshold: 3 }, maxInFlightPerUrl: 4 })
    expect(resolved.breaker).toEqual({ failureThreshold: 3, probeInterval: 1000, maxProbeInterval: 5000 })
    expect(resolved.maxInFlightPerUrl).toBe(4)
  })

  it.each([
    [{ breaker: 5 }, 'breaker', 'breaker: must be an object, got number 5'],
    [
      { breaker: { threshold: 3 } },
      'breaker.threshold',
      'breaker.threshold: is not a breaker option (known: failureThreshold, probeInterval, maxProbeInterval)',
    ],
    [
      { breaker: { failureThreshold: 0 } },
      'breaker.failureThreshold',
      'breaker.failureThreshold: must be an integer from 1 to 10000, got number 0',
    ],
    [
      { breaker: { probeInterval: 1.5 } },
      'breaker.probeInterval',
      'breaker.probeInterval: must be an integer from 100 to 3600000, got number 1.5',
    ],
    [
      { breaker: { probeInterval: 5000, maxProbeInterval: 4000 } },
      'breaker.maxProbeInterval',
      'breaker.maxProbeInterval: must be at least breaker.probeInterval (5000), got 4000',
    ],
    [
      { breaker: { maxProbeInterval: 500 } },
      'breaker.maxProbeInterval',
      'breaker.maxProbeInterval: must be at least breaker.probeInterval (1000), got 500',
    ],
    [
      { maxInFlightPerUrl: 0 },
      'maxInFlightPerUrl',
      'maxInFlightPerUrl: must be an integer from 1 to 10000, got number 0',
    ],
  ])('refuses %j, naming the field', (options, field, message) => {
    let error: unknown
    try {
      validateRelayOptions({ sources, ...options })
    } catch (caught) {
      error = caught
    }
    expect(error).toBeInstanceOf(RelayConfigError)
    expect(error).toMatchObject({ field, message })
  })
})

describe('the breaker policy', () => {
  const policy = { failureThreshold: 5, probeInterval: 2000, maxProbeInterval: 10_000, maxInFlightPerUrl: 32 }

  it('doubles the wait between probes up to the cap, and spreads it over its last fifth', () => {
    expect([0, 1, 2, 3, 10, 1000].map((n) => probeDelay(n, policy, () => 0))).toEqual([
      2000, 4000, 8000, 10_000, 10_000, 10_000,
    ])
    expect(probeDelay(0, policy, () => 0.999_999)).toBe(1600)
  })

  it.each([
    [{ status: 503 }, 'down'],
    [{ status: 500 }, 'down'],
    [{ status: 429 }, 'down'],
    [{ error: 'timed out after 5000 ms without a response', code: 'ERR_WEBHOOK_TIMEOUT' }, 'down'],
    [{ error: 'connect ECONNREFUSED 127.0.0.1:9', code: 'ECONNREFUSED' }, 'down'],
    [{ status: 200 }, 'up'],
    [{ status: 404 }, 'up'],
    [{ status: 301 }, 'up'],
    [{ error: 'refused', code: 'ERR_BLOCKED_ADDRESS' }, undefined],
  ])('judges %j as %s', (request, verdict) => {
    expect(verdictOf({ url: 'https://a.example/', ms: 1, ...request })).toBe(verdict)
  })
})
