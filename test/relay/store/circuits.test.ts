import type { Pool } from 'pg'
import { afterEach, beforeEach, describe, expect, expectTypeOf, it } from 'vitest'
import type { CircuitStore, FailureReport } from '../../../src/relay/store/circuits'
import type { Queryable } from '../../../src/relay/store/postgres/postgres-circuits'
import type { Store } from '../../../src/relay/store/store'
import { openTestStore, type StoreKind } from '../../support/stores'
import { delivery, T0 } from '../delivery/breaker-helpers'

// The circuits' contract, as every store must keep it (each method is one atomic step), over the
// deliveries of the same database: each store's own circuits (`store.circuits`).
const STORES: [string, StoreKind][] = [
  ['SQLite', 'sqlite'],
  ['PostgreSQL', 'postgres'],
]

const URL_A = 'https://a.example/hook?token=t'
const URL_B = 'https://b.example/hook'
const ROUTES = [{ source: 'web', destination: 'Webhooks' }]

describe.each(STORES)('the circuits (%s)', (_name, kind) => {
  let store: Store
  let circuits: CircuitStore
  // The store's clock (on PostgreSQL the database's too), which judges claims: moved by `claimAt`.
  let now = T0
  beforeEach(async () => {
    now = T0
    store = await openTestStore(kind, () => now)
    circuits = store.circuits
  })
  afterEach(async () => {
    await store.close()
  })

  // Runs `claim` with the clock at `at`.
  function claimAt<T>(at: number, claim: () => Promise<T>): Promise<T> {
    now = at
    return claim()
  }

  function failure(overrides: Partial<FailureReport> = {}): FailureReport {
    return {
      url: URL_A,
      failures: 1,
      threshold: 3,
      now: T0,
      firstProbeAt: T0 + 2000,
      notBefore: undefined,
      error: 'HTTP 503',
      ...overrides,
    }
  }

  async function openCircuit(url = URL_A) {
    return circuits.fail(failure({ url, failures: 3 }))
  }

  it('count failures in a row and open at the threshold, with the first probe when asked', async () => {
    expect(await circuits.fail(failure())).toMatchObject({ state: 'closed', failures: 1, nextProbeAt: undefined })
    expect(await circuits.fail(failure({ now: T0 + 5 }))).toMatchObject({ state: 'closed', failures: 2 })
    expect(await circuits.fail(failure({ now: T0 + 9, error: 'timed out' }))).toEqual({
      url: URL_A,
      state: 'open',
      failures: 3,
      probes: 0,
      openedAt: T0 + 9,
      nextProbeAt: T0 + 2000,
      probeOwner: undefined,
      probeLeaseUntil: undefined,
      lastError: 'timed out',
    })
    // Open, it counts on; only a later Retry-After moves its probe.
    expect(await circuits.fail(failure({ firstProbeAt: T0 + 9999 }))).toMatchObject({ nextProbeAt: T0 + 2000 })
    expect(await circuits.fail(failure({ notBefore: T0 + 60_000 }))).toMatchObject({
      state: 'open',
      failures: 5,
      nextProbeAt: T0 + 60_000,
    })
    expect(await circuits.get([URL_A, URL_B])).toHaveLength(1)
  })

  it('give a due probe to one relay at a time, until its hold runs out', async () => {
    await openCircuit()
    expect(await circuits.takeProbe(URL_A, 'relay-a', T0 + 1999, T0 + 30_000)).toBeUndefined()
    expect(await circuits.takeProbe(URL_A, 'relay-a', T0 + 2000, T0 + 30_000)).toMatchObject({
      state: 'half-open',
      probeOwner: 'relay-a',
    })
    expect(await circuits.takeProbe(URL_A, 'relay-b', T0 + 2000, T0 + 30_000)).toBeUndefined()
    await circuits.renewProbes('relay-a', [URL_A], T0 + 40_000)
    expect(await circuits.takeProbe(URL_A, 'relay-b', T0 + 35_000, T0 + 60_000)).toBeUndefined()
    // relay-a died holding it: once the hold runs out, relay-b probes.
    expect(await circuits.takeProbe(URL_A, 'relay-b', T0 + 40_000, T0 + 70_000)).toMatchObject({
      probeOwner: 'relay-b',
    })
    // Only the holder records the probe.
    expect(await circuits.failProbe(URL_A, 'relay-a', T0 + 50_000, 'HTTP 503', T0 + 41_000)).toBeUndefined()
    expect(await circuits.failProbe(URL_A, 'relay-b', T0 + 50_000, 'HTTP 502', T0 + 41_000)).toMatchObject({
      state: 'open',
      probes: 1,
      failures: 4,
      nextProbeAt: T0 + 50_000,
      probeOwner: undefined,
      lastError: 'HTTP 502',
    })
    await circuits.takeProbe(URL_A, 'relay-b', T0 + 50_000, T0 + 80_000)
    expect(await circuits.returnProbe(URL_A, 'relay-b', T0 + 60_000, T0 + 50_000)).toMatchObject({
      state: 'open',
      probes: 1,
      nextProbeAt: T0 + 60_000,
    })
  })

  it('close on an answer and, if open, make every waiting delivery of the routes due at once', async () => {
    await store.enqueue([delivery('web', 'm1'), delivery('web', 'm2'), delivery('other', 'm3')])
    await openCircuit()
    const claimed = await store.claim({ source: 'web', limit: 10, owner: 'relay-a', leaseMs: 30_000 })
    expect(
      await circuits.park({
        ids: claimed.map((d) => d.id),
        owner: 'relay-a',
        urls: [URL_A],
        now: T0,
        until: T0 + 60_000,
        window: 4 * 3600_000,
        error: 'circuit open',
      }),
    ).toHaveLength(2)
    expect(await store.nextDueIn('web')).toBe(60_000)

    expect(await circuits.succeed(URL_A, ROUTES, T0 + 10)).toEqual({ wasOpen: true, woken: 2 })
    expect(await circuits.get([URL_A])).toEqual([])
    const due = await claimAt(T0 + 10, () => store.claim({ source: 'web', limit: 10, owner: 'relay-b', leaseMs: 9e9 }))
    expect(due.map((d) => d.message.messageId)).toEqual(['m1', 'm2'])
    // A closed circuit with failures only forgets them.
    await circuits.fail(failure({ url: URL_B }))
    expect(await circuits.succeed(URL_B, ROUTES, T0 + 20)).toEqual({ wasOpen: false, woken: 0 })
    expect(await circuits.get([URL_B])).toEqual([])
  })

  it('park only while every URL of the deliveries is open, keeping the retry window', async () => {
    await store.enqueue([delivery('web', 'm1'), delivery('web', 'm2')])
    await openCircuit(URL_A)
    const [m1, m2] = await store.claim({ source: 'web', limit: 10, owner: 'relay-a', leaseMs: 1000 })
    const park = (urls: string[], now: number, ids = [m1!.id]) =>
      circuits.park({ ids, owner: 'relay-a', urls, now, until: now + 60_000, window: 30_000, error: 'circuit open' })
    // B is closed: not parked, still leased.
    expect(await park([URL_A, URL_B], T0)).toEqual([])
    expect(await store.claim({ source: 'web', limit: 10, owner: 'x', leaseMs: 1 })).toEqual([])
    // Another relay's lease is not parked.
    expect(await circuits.park({ ...parkRequest(m2!.id), owner: 'relay-b' })).toEqual([])
    expect(await park([URL_A], T0 + 50_000)).toEqual([m1!.id])
    const [view] = await store.list({ after: 0, limit: 1 })
    // Never attempted, its window starts now: due again at its end (in 30 s), before the recheck (60 s).
    expect(view).toMatchObject({
      status: 'pending',
      lastError: 'circuit open',
      nextAttemptAt: new Date(T0 + 80_000).toISOString(),
      attempts: [],
    })
  })

  it('give a probe the delivery due first, parked or not, unless another relay holds it', async () => {
    await store.enqueue([delivery('web', 'm1'), delivery('web', 'm2'), delivery('other', 'm3')])
    await openCircuit()
    const [m1] = await store.claim({ source: 'web', limit: 1, owner: 'relay-a', leaseMs: 30_000 })
    await circuits.park({ ...parkRequest(m1!.id), owner: 'relay-a' })
    const [m2] = await store.claim({ source: 'web', limit: 1, owner: 'relay-a', leaseMs: 30_000 })
    // m2 is leased; m1 is parked a minute out: the probe takes m1.
    const probe = await circuits.claimProbe(ROUTES, 'relay-b', 30_000)
    expect(probe).toMatchObject({ id: m1!.id, source: 'web', message: { messageId: 'm1' }, attempts: 0 })
    expect(await circuits.claimProbe(ROUTES, 'relay-b', 30_000)).toBeUndefined()
    expect(m2).toBeDefined()
  })
})

describe('the circuits (PostgreSQL)', () => {
  it('take a pg.Pool as it is (the store’s pool is passed in when the PostgreSQL store is wired)', () => {
    expectTypeOf<Pool>().toExtend<Queryable>()
  })
})

function parkRequest(id: number) {
  return { ids: [id], owner: 'relay-a', urls: [URL_A], now: T0, until: T0 + 60_000, window: 100_000, error: 'e' }
}
