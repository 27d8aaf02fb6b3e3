import { describe, expect, it } from 'vitest'
import { openPool } from '../../../src/relay/kit/postgres/pool'
import { ORDER_INDEX, POSTGRES_ORDERING_STEP } from '../../../src/relay/store/postgres/ordering-schema'
import { makeDaysAhead } from '../../../src/relay/store/postgres/partitions'
import { PostgresStore } from '../../../src/relay/store/postgres/postgres-store'
import { prepareOrderIndex } from '../../../src/relay/store/postgres/prepare-order-index'
import { MIGRATIONS, migrate } from '../../../src/relay/store/postgres/schema'
import { orderKeyOf } from '../../../src/relay/store/ordering/order-key'
import type { NewDelivery } from '../../../src/relay/store/store'
import { freshPostgresDatabase, sql } from '../../support/postgres'
import { openTestStore, STORE_KINDS, type StoreKind } from '../../support/stores'

// The ordering rule in the store itself (docs/delivery-controls.md, "Ordering"), on a clock the test
// moves: what a claim takes and leaves, across owners and expired leases; and PostgreSQL's upgrade
// to it, its index built beforehand without holding writers.

const T0 = Date.parse('2026-03-01T10:00:00.000Z')
const LEASE = 30_000

function delivery(messageId: string, userId: string, ordered = true): NewDelivery {
  const message = { type: 'track', event: 'E', userId, messageId }
  return {
    ...{ source: 'web', destination: 'Webhooks', messageId, type: 'track', json: JSON.stringify(message) },
    orderKey: ordered ? orderKeyOf('web', 'Webhooks', message) : undefined,
  }
}

describe.each(STORE_KINDS)('the claim of ordered deliveries (%s)', (kind: StoreKind) => {
  it('takes one per user at a time, in order, through retries, expired leases and dead letters', async () => {
    const clock = { now: T0 }
    const store = await openTestStore(kind, () => clock.now)
    const ids = async (owner: string) =>
      (await store.claim({ source: 'web', limit: 100, owner, leaseMs: LEASE })).map((d) => d.message['messageId'])
    try {
      await store.enqueue([delivery('a1', 'A'), delivery('b1', 'B'), delivery('a2', 'A'), delivery('x1', 'X', false)])
      await store.enqueue([delivery('a3', 'A'), delivery('b2', 'B'), delivery('x2', 'X', false)])
      // The first of each user, and every unordered one.
      const first = await store.claim({ source: 'web', limit: 100, owner: 'r1', leaseMs: LEASE })
      expect(first.map((d) => d.message['messageId'])).toEqual(['a1', 'b1', 'x1', 'x2'])
      expect(await ids('r2')).toEqual([])
      const a1 = first[0]!
      const aheadOfA2 = await store.ordering.aheadOf(a1.id + 2)
      expect(aheadOfA2).toBe(a1.id)
      expect(await store.ordering.aheadOf(a1.id)).toBeUndefined()
      expect(await store.ordering.waiting()).toEqual([{ source: 'web', destination: 'Webhooks', count: 3 }])
      // b1 (and the unordered ones) delivered: b2 goes. a1 retried in a second: a2 waits, and the
      // next due is a1's retry.
      const delivered = (id: number) => ({ id, at: clock.now, requests: [], next: { status: 'delivered' as const } })
      await store.record([
        ...[1, 2, 3].map((i) => delivered(first[i]!.id)),
        {
          id: a1.id,
          at: clock.now,
          requests: [],
          next: { status: 'pending', nextAttemptAt: clock.now + 1000, error: '500' },
        },
      ])
      const b2 = await store.claim({ source: 'web', limit: 100, owner: 'r2', leaseMs: LEASE })
      expect(b2.map((d) => d.message['messageId'])).toEqual(['b2'])
      await store.record([delivered(b2[0]!.id)])
      expect(await store.nextDueIn('web')).toBe(1000)
      // a1's retry is taken by a relay that dies: its lease runs out, and a1 comes back first.
      clock.now += 1000
      expect(await ids('dead')).toEqual(['a1'])
      clock.now += LEASE
      expect(await ids('r2')).toEqual(['a1'])
      // Dead-lettered: the next of A goes, one at a time.
      await store.record([{ id: a1.id, at: clock.now, requests: [], next: { status: 'failed', error: 'gone' } }])
      expect(await ids('r2')).toEqual(['a2'])
      expect(await store.ordering.waiting()).toEqual([{ source: 'web', destination: 'Webhooks', count: 1 }])
    } finally {
      await store.close()
    }
  })

  it("puts a retried head's line at its retry time, so claims pass over it, and brings it back with it", async () => {
    const clock = { now: T0 }
    const store = await openTestStore(kind, () => clock.now)
    const claim = async () =>
      (await store.claim({ source: 'web', limit: 100, owner: 'r1', leaseMs: LEASE })).map((d) => d.message['messageId'])
    const at = (id: number) => store.get(id).then((d) => d?.nextAttemptAt)
    try {
      await store.enqueue([delivery('a1', 'A'), delivery('a2', 'A'), delivery('a3', 'A'), delivery('b1', 'B')])
      const [a1, b1] = await store.claim({ source: 'web', limit: 100, owner: 'r1', leaseMs: LEASE })
      expect([a1, b1].map((d) => d?.message['messageId'])).toEqual(['a1', 'b1'])
      const retryAt = T0 + 60_000
      await store.record([
        { id: a1!.id, at: clock.now, requests: [], next: { status: 'pending', nextAttemptAt: retryAt, error: '500' } },
        { id: b1!.id, at: clock.now, requests: [], next: { status: 'delivered' } },
      ])
      // Held deliveries were due (and read by every claim); now they wait as long as their head.
      expect(await at(a1!.id + 1)).toBe(new Date(T0).toISOString())
      expect(await store.ordering.mirrorHeads()).toBe(2)
      expect(await at(a1!.id + 1)).toBe(new Date(retryAt).toISOString())
      expect(await at(a1!.id + 2)).toBe(new Date(retryAt).toISOString())
      expect(await store.ordering.mirrorHeads()).toBe(0)
      expect(await store.nextDueIn('web')).toBe(60_000)
      await store.enqueue([delivery('b2', 'B')])
      const [b2, ...others] = await store.claim({ source: 'web', limit: 100, owner: 'r1', leaseMs: LEASE })
      expect([b2?.message['messageId'], others]).toEqual(['b2', []])
      await store.record([{ id: b2!.id, at: clock.now, requests: [], next: { status: 'delivered' } }])
      // The head's retry: it goes first, its line right after it is delivered.
      clock.now = retryAt
      expect(await claim()).toEqual(['a1'])
      await store.record([{ id: a1!.id, at: clock.now, requests: [], next: { status: 'delivered' } }])
      expect(await claim()).toEqual(['a2'])
    } finally {
      await store.close()
    }
  })
})

describe('the ordering step on PostgreSQL', () => {
  it('finds its index built beforehand on a queue that has rows, and keeps the previous enqueue', async () => {
    const url = await freshPostgresDatabase()
    const pool = await openPool(url)
    const store = new PostgresStore(pool, { now: () => T0, databaseNow: () => T0 })
    try {
      await migrate(pool, MIGRATIONS.slice(0, MIGRATIONS.indexOf(POSTGRES_ORDERING_STEP)))
      await makeDaysAhead(pool, T0)
      // A relay of the previous version writes with the eight-argument function.
      expect(await store.enqueue([delivery('old', 'A', false)])).toBe(1)
      await prepareOrderIndex(pool)
      const built = await sql<{ oid: number; valid: boolean }>(
        url,
        `SELECT indexrelid::int AS oid, indisvalid AS valid FROM pg_index WHERE indexrelid = '${ORDER_INDEX}'::regclass`,
      )
      expect(built.map((b) => b.valid)).toEqual([true])
      await migrate(pool)
      const after = await sql<{ oid: number }>(url, `SELECT '${ORDER_INDEX}'::regclass::oid::int AS oid`)
      expect(after[0]!.oid).toBe(built[0]!.oid)
      // Both functions: the previous version's relays still write beside this one's.
      expect(await store.enqueue([delivery('new', 'A')])).toBe(1)
      expect(await store.enqueue([delivery('plain', 'B', false)])).toBe(1)
      const keys = await sql<{ id: number; order_key: string | null }>(
        url,
        'SELECT id, order_key FROM queue ORDER BY id',
      )
      // A batch without an ordered delivery: a queue row no more, a block (docs/postgres.md, "Leased blocks").
      expect(keys.map((k) => k.order_key === null)).toEqual([true, false])
      expect(await sql(url, 'SELECT size FROM delivery_blocks')).toEqual([{ size: 1 }])
      // The two versions lock a message alike, so that a message given to both at once (a batch
      // with an ordered delivery and one without) is still written once: the same lock line.
      const bodies = await sql<{ args: number; body: string }>(
        url,
        "SELECT pronargs AS args, prosrc AS body FROM pg_proc WHERE proname = 'tracklet_enqueue' ORDER BY 1",
      )
      const locks = bodies.map((b) => /pg_advisory_xact_lock[^;]*;/.exec(b.body)?.[0].replace(/\s+/g, ' '))
      expect(bodies.map((b) => b.args)).toEqual([8, 9])
      expect(locks[0]).toBeDefined()
      expect(locks[1]).toBe(locks[0])
      // Upgraded already: nothing more to prepare.
      await prepareOrderIndex(pool)
    } finally {
      await store.close()
    }
  })
})
