import { describe, expect, it } from 'vitest'
import { type BreakerPolicy, nextProbeAt, probeDelay, verdictOf } from '../../../src/relay/delivery/breaker-policy'
import { BLOCKED_ADDRESS_CODE } from '../../../src/relay/delivery/ssrf'
import { isRetryableFailure } from '../../../src/webhooks/retry-rule'

const policy: BreakerPolicy = { failureThreshold: 3, probeInterval: 1000, maxProbeInterval: 8000, maxInFlightPerUrl: 2 }

describe('the breaker policy', () => {
  it('counts against a receiver exactly the failures the retry rule retries', () => {
    const requests = [
      { url: 'u', ms: 1, error: 'timed out', code: 'ERR_WEBHOOK_TIMEOUT' },
      { url: 'u', ms: 1, error: 'refused', code: 'ECONNREFUSED' },
      ...[200, 204, 301, 400, 404, 410, 429, 500, 503].map((status) => ({ url: 'u', ms: 1, status })),
    ]
    for (const request of requests) {
      expect(verdictOf(request), JSON.stringify(request)).toBe(isRetryableFailure(request) ? 'down' : 'up')
    }
  })

  it('takes a 4xx as a sign of life (it closes a circuit) though it is not retried', () => {
    expect(isRetryableFailure({ status: 404 })).toBe(false)
    expect(verdictOf({ url: 'u', ms: 1, status: 404 })).toBe('up')
  })

  it('has no verdict on a connection the SSRF guard refused', () => {
    expect(verdictOf({ url: 'u', ms: 1, error: 'blocked', code: BLOCKED_ADDRESS_CODE })).toBeUndefined()
  })

  it('doubles the wait between probes up to the cap, up to 20 % earlier, never before a Retry-After', () => {
    expect([0, 1, 2, 3, 4].map((n) => probeDelay(n, policy, () => 0))).toEqual([1000, 2000, 4000, 8000, 8000])
    expect(probeDelay(0, policy, () => 0.5)).toBe(900)
    expect(nextProbeAt(10_000, 0, policy, () => 0, 60_000)).toBe(70_000)
    expect(nextProbeAt(10_000, 0, policy, () => 0, Number.NaN)).toBe(11_000)
  })
})
