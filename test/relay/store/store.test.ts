import { afterEach, describe, expect, it } from 'vitest'
import type { AttemptOutcome, NewDelivery, Store } from '../../../src/relay/store/store'
import { openTestStore, STORE_KINDS, type StoreKind } from '../../support/stores'
import { openStoreWithSql, type StoreWithSql } from '../fixtures/store'

// The behaviour both stores promise the worker, the retention sweeper and the admin API (the
// Store interface), checked on each. Times are explicit epoch ms: no clock is read (on PostgreSQL
// the test's clock stands in for the database's, which judges leases and due times).
const T0 = Date.parse('2026-01-01T00:00:00.000Z')
const LEASE = 30_000

const opened: Store[] = []
afterEach(async () => {
  for (const store of opened.splice(0)) await store.close()
})

function delivery(messageId: string, source = 'web'): NewDelivery {
  return {
    source,
    destination: 'Webhooks',
    messageId,
    type: 'track',
    json: JSON.stringify({ type: 'track', userId: 'u', event: 'E', messageId }),
  }
}

function delivered(id: number, at = T0): AttemptOutcome {
  return { id, at, requests: [{ url: 'https://a.example/hook', status: 200, ms: 3 }], next: { status: 'delivered' } }
}

describe.each(STORE_KINDS)('the %s store', (kind: StoreKind) => {
  let now = T0
  async function open(): Promise<Store> {
    now = T0
    const store = await openTestStore(kind, () => now)
    opened.push(store)
    return store
  }
  // A store and the store's own SQL on its database, for a look at the lease columns no method shows.
  async function openWithSql(): Promise<StoreWithSql> {
    now = T0
    const opening = await openStoreWithSql(kind, () => now)
    opened.push(opening.store)
    return opening
  }
  const p = (n: number) => (kind === 'sqlite' ? '?' : `$${n}`)
  const leaseOf = async ({ sql }: StoreWithSql, id: number) =>
    (
      await sql<{ lease_owner: string | null; lease_until: number | null }>(
        `SELECT lease_owner, lease_until FROM deliveries WHERE id = ${p(1)}`,
        id,
      )
    )[0]
  // Claims at `at`: the clock moves there (and stays).
  const claim = (store: Store, owner: string, limit = 10, at = now) => {
    now = at
    return store.claim({ source: 'web', limit, owner, leaseMs: LEASE })
  }
  const ids = (rows: { id: number }[]) => rows.map((r) => r.id).sort((a, b) => a - b)

  it('enqueues once per message id and destination, and says how many were new', async () => {
    const store = await open()
    expect(await store.enqueue([delivery('m1'), delivery('m2')])).toBe(2)
    expect(await store.enqueue([delivery('m2'), delivery('m3'), delivery('m3')])).toBe(1)
    const log = await store.list({ after: 0, limit: 10 })
    expect(log.map((d) => [d.messageId, d.status])).toEqual([
      ['m1', 'pending'],
      ['m2', 'pending'],
      ['m3', 'pending'],
    ])
    expect(typeof log[0]!.id).toBe('number')
  })

  it('gives each due delivery to one owner: a second claim gets only the rest, oldest first', async () => {
    const store = await open()
    await store.enqueue(['m1', 'm2', 'm3', 'm4', 'm5'].map((m) => delivery(m)))
    const first = await claim(store, 'relay-a', 3)
    const second = await claim(store, 'relay-b', 10)
    expect(first.map((d) => d.message.messageId)).toEqual(['m1', 'm2', 'm3'])
    expect(second.map((d) => d.message.messageId)).toEqual(['m4', 'm5'])
    expect(await claim(store, 'relay-c')).toEqual([])
  })

  it('never gives one delivery to two owners claiming at the same instant', async () => {
    const store = await open()
    await store.enqueue(Array.from({ length: 200 }, (_, i) => delivery(`m${i}`)))
    // Rounds of eight claims at once until one finds nothing. On PostgreSQL a claim that splits a
    // block (docs/postgres.md, "Leased blocks") holds its rest until it commits: the claims beside
    // it skip that rest, which the next round takes.
    const all: number[] = []
    for (let round = 0; round < 10; round++) {
      const claims = await Promise.all(Array.from({ length: 8 }, (_, i) => claim(store, `relay-${round}-${i}`, 40)))
      const ids = claims.flatMap((c) => c.map((d) => d.id))
      if (ids.length === 0) break
      all.push(...ids)
    }
    expect(new Set(all).size).toBe(all.length)
    expect(all).toHaveLength(200)
  })

  it('lets another owner claim a delivery once its lease has run out, and not before', async () => {
    const store = await open()
    await store.enqueue([delivery('m1')])
    const [taken] = await claim(store, 'relay-a')
    expect(await claim(store, 'relay-b', 10, T0 + LEASE - 1)).toEqual([])
    expect(await store.nextDueIn('web')).toBe(1)
    const again = await claim(store, 'relay-b', 10, T0 + LEASE)
    expect(again.map((d) => d.id)).toEqual([taken!.id])
  })

  it('keeps a renewed lease, and only its owner can renew it', async () => {
    const store = await open()
    await store.enqueue([delivery('m1')])
    const [taken] = await claim(store, 'relay-a')
    await store.renew('relay-b', [taken!.id], 10 * LEASE) // not b's lease: no effect
    await store.renew('relay-a', [taken!.id], 2 * LEASE)
    expect(await claim(store, 'relay-b', 10, T0 + LEASE)).toEqual([])
    expect(await claim(store, 'relay-b', 10, T0 + 2 * LEASE)).toHaveLength(1)
  })

  it('frees a released lease for anyone at once', async () => {
    const store = await open()
    await store.enqueue([delivery('m1'), delivery('m2')])
    const taken = await claim(store, 'relay-a')
    await store.release('relay-b', ids(taken)) // not b's: no effect
    expect(await claim(store, 'relay-b')).toEqual([])
    await store.release('relay-a', [taken[0]!.id])
    expect((await claim(store, 'relay-b')).map((d) => d.id)).toEqual([taken[0]!.id])
  })

  it('renews and releases only the leases of pending deliveries', async () => {
    const opening = await openWithSql()
    const { store, sql } = opening
    await store.enqueue([delivery('m1'), delivery('m2')])
    const [a, b] = await claim(store, 'relay-a')
    // Dead-lettered while leased, its lease left standing (as failUnconfiguredSources once did on SQLite).
    await sql(`UPDATE deliveries SET status = 'failed' WHERE id IN (${p(1)}, ${p(2)})`, a!.id, b!.id)
    await store.renew('relay-a', [a!.id], 5 * LEASE)
    await store.release('relay-a', [b!.id])
    expect(await leaseOf(opening, a!.id)).toEqual({ lease_owner: 'relay-a', lease_until: T0 + LEASE })
    expect(await leaseOf(opening, b!.id)).toEqual({ lease_owner: 'relay-a', lease_until: T0 + LEASE })
  })

  it('records outcomes in one batch, ending their leases; a retry is due again only at its time', async () => {
    const store = await open()
    await store.enqueue([delivery('m1'), delivery('m2'), delivery('m3')])
    const [a, b, c] = await claim(store, 'relay-a')
    await store.record([
      delivered(a!.id),
      {
        id: b!.id,
        at: T0,
        requests: [{ url: 'https://a.example/hook', status: 503, ms: 4 }],
        next: { status: 'pending', nextAttemptAt: T0 + 1000, error: 'HTTP 503' },
      },
      {
        id: c!.id,
        at: T0,
        requests: [{ url: 'https://a.example/hook', error: 'refused', ms: 1 }],
        next: { status: 'failed', error: 'refused' },
      },
    ])
    const log = await store.list({ after: 0, limit: 10 })
    expect(log.map((d) => [d.status, d.attempts.length, d.lastError])).toEqual([
      ['delivered', 1, null],
      ['pending', 1, 'HTTP 503'],
      ['failed', 1, 'refused'],
    ])
    expect(log[1]!.attempts[0]).toEqual({
      at: new Date(T0).toISOString(),
      url: 'https://a.example/hook',
      status: 503,
      ms: 4,
    })
    expect(await store.nextDueIn('web')).toBe(1000)
    expect(await claim(store, 'relay-b', 10, T0 + 999)).toEqual([])
    const [retried] = await claim(store, 'relay-b', 10, T0 + 1000)
    expect(retried).toMatchObject({ id: b!.id, attempts: 1, firstAttemptAt: T0 })
  })

  it('only logs an outcome for a delivery that is no longer pending (recorded by a relay whose lease ran out)', async () => {
    const store = await open()
    await store.enqueue([delivery('m1')])
    const [taken] = await claim(store, 'relay-a')
    const [again] = await claim(store, 'relay-b', 10, T0 + LEASE)
    await store.record([delivered(again!.id, T0 + LEASE)])
    await store.record([
      {
        id: taken!.id,
        at: T0,
        requests: [{ url: 'https://a.example/hook', status: 500, ms: 9 }],
        next: { status: 'failed', error: 'HTTP 500' },
      },
    ])
    const [row] = await store.list({ after: 0, limit: 10 })
    expect(row).toMatchObject({ status: 'delivered', lastError: null })
    expect(row!.attempts.map((a) => a.status)).toEqual([200, 500])
  })

  it('prunes delivered deliveries older than the cut-off with their attempts, keeping failed and pending ones', async () => {
    const store = await open()
    await store.enqueue(['old', 'fail', 'wait', 'new'].map((m) => delivery(m)))
    const [old, fail] = await claim(store, 'relay-a', 2)
    await store.record([
      delivered(old!.id),
      { id: fail!.id, at: T0, requests: [], next: { status: 'failed', error: 'refused' } },
    ])
    now = T0 + 5000
    const [, newer] = await claim(store, 'relay-a', 2, now)
    await store.record([delivered(newer!.id, now)])
    expect(await store.prune(T0 + 1, 100)).toBe(1)
    expect(await store.prune(T0 + 1, 100)).toBe(0)
    const log = await store.list({ after: 0, limit: 10 })
    expect(log.map((d) => [d.messageId, d.status])).toEqual([
      ['fail', 'failed'],
      ['wait', 'pending'],
      ['new', 'delivered'],
    ])
  })

  it('prunes at most `limit` at a time', async () => {
    const store = await open()
    await store.enqueue(['a', 'b', 'c'].map((m) => delivery(m)))
    await store.record((await claim(store, 'relay-a')).map((d) => delivered(d.id)))
    expect(await store.prune(T0 + 1, 2)).toBe(2)
    expect(await store.prune(T0 + 1, 2)).toBe(1)
  })

  it('counts the backlog per source and status, with the oldest creation time', async () => {
    const store = await open()
    await store.enqueue([delivery('m1'), delivery('m2'), delivery('x1', 'app')])
    now = T0 + 10
    await store.enqueue([delivery('m3')])
    const [first] = await claim(store, 'relay-a', 1)
    await store.record([{ id: first!.id, at: now, requests: [], next: { status: 'failed', error: 'no' } }])
    expect(await store.backlog()).toEqual([
      { source: 'app', status: 'pending', count: 1, oldestCreatedAt: T0 },
      { source: 'web', status: 'failed', count: 1, oldestCreatedAt: T0 },
      { source: 'web', status: 'pending', count: 2, oldestCreatedAt: T0 },
    ])
  })

  it('retries a dead-lettered delivery and says why it cannot retry others', async () => {
    const store = await open()
    await store.enqueue([delivery('m1'), delivery('m2')])
    const [a] = await claim(store, 'relay-a', 1)
    await store.record([{ id: a!.id, at: T0, requests: [], next: { status: 'failed', error: 'no' } }])
    expect(await store.retry(a!.id)).toBe('retried')
    expect(await store.retry(a!.id)).toBe('not-failed')
    expect(await store.retry(9999)).toBe('not-found')
    const [again] = await claim(store, 'relay-b', 1)
    expect(again).toMatchObject({ id: a!.id, attempts: 0, firstAttemptAt: undefined })
  })

  it('gets one delivery by id, with its attempts', async () => {
    const store = await open()
    await store.enqueue([delivery('m1'), delivery('m2')])
    const [first] = await claim(store, 'relay-a', 1)
    await store.record([delivered(first!.id)])
    const got = await store.get(first!.id)
    expect(got).toMatchObject({ id: first!.id, messageId: 'm1', status: 'delivered', nextAttemptAt: null })
    expect(got!.attempts).toEqual([
      { at: new Date(T0).toISOString(), url: 'https://a.example/hook', status: 200, ms: 3 },
    ])
    expect(got).toEqual((await store.list({ after: 0, limit: 1 }))[0])
    expect(await store.get(9999)).toBeUndefined()
  })

  it('lists the delivery log newest first, filtered, below a cursor', async () => {
    const store = await open()
    // Written one after the other, as requests of two sources would be (within one write, a store
    // may number one source's deliveries before another's: PostgreSQL's blocks).
    await store.enqueue([delivery('m1')])
    await store.enqueue([delivery('x1', 'app')])
    await store.enqueue([delivery('m2'), delivery('m3')])
    const all = await store.listNewest({ limit: 10 })
    expect(all.map((d) => d.messageId)).toEqual(['m3', 'm2', 'x1', 'm1'])
    const web = await store.listNewest({ source: 'web', status: 'pending', limit: 2 })
    expect(web.map((d) => d.messageId)).toEqual(['m3', 'm2'])
    const older = await store.listNewest({ source: 'web', before: web[1]!.id, limit: 2 })
    expect(older.map((d) => d.messageId)).toEqual(['m1'])
    expect(await store.listNewest({ status: 'delivered', limit: 10 })).toEqual([])
  })

  it('filters the delivery log by status and source, paged by id', async () => {
    const store = await open()
    for (const d of [delivery('m1'), delivery('x1', 'app'), delivery('m2')]) await store.enqueue([d])
    const web = await store.list({ after: 0, limit: 10, source: 'web', status: 'pending' })
    expect(web.map((d) => d.messageId)).toEqual(['m1', 'm2'])
    const page = await store.list({ after: web[0]!.id, limit: 1 })
    expect(page.map((d) => d.messageId)).toEqual(['x1'])
    expect(await store.list({ after: 0, limit: 10, status: 'delivered' })).toEqual([])
  })

  it('dead-letters the pending deliveries of sources no longer configured', async () => {
    const store = await open()
    await store.enqueue([delivery('m1'), delivery('x1', 'gone')])
    expect(await store.failUnconfiguredSources(['web'])).toBe(1)
    const [gone] = await store.list({ after: 0, limit: 10, source: 'gone' })
    expect(gone).toMatchObject({ status: 'failed', lastError: 'source "gone" is no longer configured' })
  })

  it('ends the leases of the deliveries it dead-letters for an unconfigured source', async () => {
    const opening = await openWithSql()
    const { store } = opening
    await store.enqueue([delivery('x1', 'gone')])
    const [leased] = await store.claim({ source: 'gone', limit: 1, owner: 'relay-a', leaseMs: LEASE })
    expect(await store.failUnconfiguredSources(['web'])).toBe(1)
    expect(await leaseOf(opening, leased!.id)).toEqual({ lease_owner: null, lease_until: null })
  })

  it('syncs an audience: joins and leaves enqueued with the memberships, in one transaction', async () => {
    const store = await open()
    const announce = (change: { added: string[]; removed: string[] }) => [
      ...change.added.map((u) => delivery(`join-${u}`)),
      ...change.removed.map((u) => delivery(`leave-${u}`)),
    ]
    expect(await store.syncAudience('web', 'vip', ['u1', 'u2'], announce)).toEqual({ added: ['u1', 'u2'], removed: [] })
    expect(await store.syncAudience('web', 'vip', ['u2', 'u3'], announce)).toEqual({ added: ['u3'], removed: ['u1'] })
    await expect(
      store.syncAudience('web', 'vip', ['u9'], () => {
        throw new Error('announce failed')
      }),
    ).rejects.toThrow('announce failed')
    // The failed sync changed nothing: u9 joins now, u2 and u3 leave.
    expect(await store.syncAudience('web', 'vip', ['u9'], announce)).toEqual({ added: ['u9'], removed: ['u2', 'u3'] })
    const log = await store.list({ after: 0, limit: 20 })
    expect(log.map((d) => d.messageId)).toEqual([
      'join-u1',
      'join-u2',
      'join-u3',
      'leave-u1',
      'join-u9',
      'leave-u2',
      'leave-u3',
    ])
  })

  it('announces each join once when two syncs of the same audience run at once', async () => {
    const store = await open()
    const announce = (change: { added: string[]; removed: string[] }) =>
      change.added.map((u) => ({ ...delivery(`join-${u}`), messageId: `join-${u}-${Math.random()}` }))
    const results = await Promise.all([
      store.syncAudience('web', 'vip', ['u1', 'u2', 'u3'], announce),
      store.syncAudience('web', 'vip', ['u1', 'u2', 'u3'], announce),
    ])
    expect(results.map((r) => r.added.length).sort()).toEqual([0, 3])
    expect(await store.list({ after: 0, limit: 20 })).toHaveLength(3)
  })
})
