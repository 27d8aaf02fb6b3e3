import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { endpointId, RECENT_MS } from '../../../src/relay/store/endpoints'
import type { AttemptOutcome, Store } from '../../../src/relay/store/store'
import { openTestStore, STORE_KINDS } from '../../support/stores'
import { delivery, T0 } from '../delivery/breaker-helpers'

// What the operator's endpoints view reads of each webhook URL, and what attempts keep of a
// failed request: on both stores.
const DOWN = 'https://down.example/hook?token=secret'
const UP = 'https://up.example/hook'
const WEB = [{ source: 'web', destination: 'Webhooks' }]
const IOS = [{ source: 'ios', destination: 'Webhooks' }]

describe.each(STORE_KINDS)('the endpoints view (%s)', (kind) => {
  let store: Store
  let clock = T0
  beforeEach(async () => {
    clock = T0
    store = await openTestStore(kind, () => clock)
  })
  afterEach(async () => {
    await store.close()
  })

  // Records one attempt of a new delivery of `source` with these requests.
  async function attempt(source: string, at: number, requests: AttemptOutcome['requests'], failed = false) {
    const id = `m${Math.random()}`
    await store.enqueue([delivery(source, id)])
    const saved = clock
    clock = at
    const [claimed] = await store.claim({ source, limit: 1, owner: 'r', leaseMs: 1000 })
    clock = saved
    await store.record([
      {
        id: claimed!.id,
        at,
        requests,
        next: failed ? { status: 'pending', nextAttemptAt: at + 60_000, error: 'HTTP 500' } : { status: 'delivered' },
      },
    ])
  }

  it('shows each URL with its circuit, what waits behind it, its recent requests and their latency', async () => {
    const now = T0 + 3600_000
    // Up: 100 requests in the last five minutes, 1..100 ms, all answered 200; one older, slow.
    for (let ms = 1; ms <= 100; ms++) await attempt('ios', now - 1000, [{ url: UP, status: 200, ms }])
    await attempt('ios', now - RECENT_MS - 1, [{ url: UP, status: 200, ms: 9999 }])
    // Down: a 503, then a 500 with a body, and an open circuit; two deliveries wait.
    await attempt('web', now - 2000, [{ url: DOWN, status: 503, ms: 4 }], true)
    await attempt(
      'web',
      now - 1000,
      [{ url: DOWN, status: 500, ms: 6, responseBody: '{"error":"db pool exhausted"}' }],
      true,
    )
    await store.circuits.fail({
      url: DOWN,
      failures: 5,
      threshold: 5,
      now: now - 1000,
      firstProbeAt: now + 4000,
      notBefore: undefined,
      error: 'HTTP 500',
    })

    const [down, up] = await store.endpoints({
      endpoints: [
        { url: DOWN, routes: WEB },
        { url: UP, routes: IOS },
      ],
      now,
    })
    expect(down).toEqual({
      id: endpointId(DOWN),
      url: 'https://down.example/hook',
      sources: ['web'],
      state: 'open',
      failures: 5,
      openedAt: now - 1000,
      nextProbeAt: now + 4000,
      lastFailure: { at: now - 1000, status: 500, error: 'HTTP 500', responseBody: '{"error":"db pool exhausted"}' },
      pending: 2,
      // Both written at T0 (the clock of the enqueue): the oldest waiting is what an archive's lag reads.
      oldestPendingAt: T0,
      recent: { delivered: 0, failed: 2, p50: 4, p99: 6 },
    })
    expect(up).toEqual({
      id: endpointId(UP),
      url: UP,
      sources: ['ios'],
      state: 'closed',
      failures: 0,
      pending: 0,
      recent: { delivered: 100, failed: 0, p50: 50, p99: 99 },
    })
  })

  it('shows a paused URL as paused, with no probe time, and a URL never used as idle', async () => {
    await store.circuits.pause(DOWN, T0)
    const [paused, unused] = await store.endpoints({
      endpoints: [
        { url: DOWN, routes: WEB },
        { url: UP, routes: [] },
      ],
      now: T0 + 10,
    })
    expect(paused).toMatchObject({ state: 'paused', pausedAt: T0 })
    expect(paused).not.toHaveProperty('nextProbeAt')
    expect(unused).toEqual({
      id: endpointId(UP),
      url: UP,
      sources: [],
      state: 'closed',
      failures: 0,
      pending: 0,
      recent: { delivered: 0, failed: 0 },
    })
  })

  it('gives each URL a stable, URL-safe id that does not reveal it', () => {
    expect(endpointId(DOWN)).toBe(endpointId(DOWN))
    expect(endpointId(DOWN)).not.toBe(endpointId(UP))
    expect(endpointId(DOWN)).toMatch(/^[A-Za-z0-9_-]{16}$/)
    expect(endpointId(DOWN)).not.toContain('secret')
  })

  it("keeps a failed request's response body and headers, and returns them with the delivery", async () => {
    const headers = { 'Content-Type': 'application/json', 'X-Signature': '(present)', 'X-Team': '(redacted)' }
    await attempt(
      'web',
      T0,
      [
        { url: DOWN, status: 500, ms: 5, responseBody: 'db pool exhausted ✗', requestHeaders: headers },
        { url: UP, error: 'timed out after 5000 ms without a response', ms: 5000, requestHeaders: headers },
      ],
      true,
    )
    const [view] = await store.listNewest({ limit: 1 })
    const found = await store.get(view!.id)
    expect(found?.attempts).toEqual([
      {
        at: new Date(T0).toISOString(),
        url: DOWN,
        status: 500,
        ms: 5,
        responseBody: 'db pool exhausted ✗',
        requestHeaders: headers,
      },
      {
        at: new Date(T0).toISOString(),
        url: UP,
        error: 'timed out after 5000 ms without a response',
        ms: 5000,
        requestHeaders: headers,
      },
    ])
  })
})
