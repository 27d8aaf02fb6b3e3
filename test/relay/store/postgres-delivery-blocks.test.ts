import pg from 'pg'
import { afterEach, describe, expect, it } from 'vitest'
import type { PostgresPool } from '../../../src/relay/kit/postgres/pool'
import { BLOCK_SIZE } from '../../../src/relay/store/postgres/delivery-blocks'
import { makeDaysAhead } from '../../../src/relay/store/postgres/partitions'
import { PostgresStore } from '../../../src/relay/store/postgres/postgres-store'
import { MIGRATIONS, migrate } from '../../../src/relay/store/postgres/schema'
import type { AttemptOutcome, DueDelivery } from '../../../src/relay/store/store'
import { freshPostgresDatabase } from '../../support/postgres'
import { testDelivery } from '../fixtures/deliveries'
import { openPostgresStoreWithPool } from '../fixtures/store'
import { openPool } from '../../../src/relay/kit/postgres/pool'

// Leased blocks on PostgreSQL (docs/postgres.md, "Leased blocks"): a new delivery has no queue row;
// its block is leased, split, claimed again after its relay's lease ran out, and given up with its
// last outcome, and every other path still sees the delivery pending.
const T0 = Date.parse('2026-03-01T10:00:00.000Z')
const LEASE = 30_000

let opened: { store: PostgresStore; pool: PostgresPool }[] = []
afterEach(async () => {
  for (const { store } of opened) await store.close()
  opened = []
})

async function open(clock: { now: number }) {
  const it = await openPostgresStoreWithPool(() => clock.now)
  await makeDaysAhead(it.pool, clock.now)
  opened.push(it)
  return it
}

const claim = (store: PostgresStore, owner: string, limit = 100) =>
  store.claim({ source: 'web', limit, owner, leaseMs: LEASE })
const ids = (due: readonly DueDelivery[]) => due.map((d) => d.message.messageId)
const answered = (d: DueDelivery, at: number, status: number, next: AttemptOutcome['next']): AttemptOutcome => ({
  id: d.id,
  at,
  requests: [{ url: 'https://hooks.example/', status, ms: 20 }],
  next,
})
const delivered = (d: DueDelivery, at: number) => answered(d, at, 200, { status: 'delivered' })

async function count(pool: PostgresPool, table: 'queue' | 'delivery_blocks'): Promise<number> {
  const { rows } = await pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`)
  return rows[0]!.n
}

describe('leased blocks on PostgreSQL', () => {
  it('writes new deliveries as blocks of one source in the batch order, not queue rows, shown pending', async () => {
    const clock = { now: T0 }
    const { store, pool } = await open(clock)
    const batch = [testDelivery('m1'), testDelivery('x1', { source: 'app' }), testDelivery('m2')]
    const many = Array.from({ length: BLOCK_SIZE + 2 }, (_, i) => testDelivery(`n${i}`))
    expect(await store.enqueue(batch)).toBe(3)
    expect(await store.enqueue(many)).toBe(BLOCK_SIZE + 2)
    expect(await count(pool, 'queue')).toBe(0)
    const { rows } = await pool.query<{ source: string; size: number }>(
      'SELECT source, size FROM delivery_blocks ORDER BY first_id',
    )
    expect(rows).toEqual([
      { source: 'web', size: 2 },
      { source: 'app', size: 1 },
      { source: 'web', size: BLOCK_SIZE },
      { source: 'web', size: 2 },
    ])
    const log = await store.list({ after: 0, limit: 500 })
    expect(log.map((d) => d.messageId).slice(0, 3)).toEqual(['m1', 'm2', 'x1'])
    expect(new Set(log.map((d) => d.status))).toEqual(new Set(['pending']))
    expect((await store.listNewest({ status: 'pending', source: 'app', limit: 10 })).map((d) => d.messageId)).toEqual([
      'x1',
    ])
    expect(await store.backlog()).toEqual([
      { source: 'app', status: 'pending', count: 1, oldestCreatedAt: T0 },
      { source: 'web', status: 'pending', count: BLOCK_SIZE + 4, oldestCreatedAt: T0 },
    ])
  })

  it('splits a block for a claim that wants fewer: two relays get disjoint parts, each delivery once', async () => {
    const clock = { now: T0 }
    const { store, pool } = await open(clock)
    await store.enqueue(Array.from({ length: 10 }, (_, i) => testDelivery(`m${i}`)))
    const a = await claim(store, 'relay-a', 3)
    const b = await claim(store, 'relay-b', 10)
    expect(ids(a)).toEqual(['m0', 'm1', 'm2'])
    expect(ids(b)).toEqual(['m3', 'm4', 'm5', 'm6', 'm7', 'm8', 'm9'])
    expect(await claim(store, 'relay-a')).toEqual([])
    await store.record([...a, ...b].map((d) => delivered(d, clock.now)))
    expect(await count(pool, 'delivery_blocks')).toBe(0)
    expect(await count(pool, 'queue')).toBe(0)
    const log = await store.list({ after: 0, limit: 20 })
    expect(log.map((d) => [d.messageId, d.status, d.attempts.length])).toEqual(
      Array.from({ length: 10 }, (_, i) => [`m${i}`, 'delivered', 1]),
    )
  })

  it('claims a block again once its relay’s lease ran out, with only what it still holds', async () => {
    const clock = { now: T0 }
    const { store, pool } = await open(clock)
    await store.enqueue(Array.from({ length: 5 }, (_, i) => testDelivery(`m${i}`)))
    const [m0, m1, ...rest] = await claim(store, 'relay-a')
    // relay-a answered two, then stopped answering: its lease runs out.
    await store.record([
      delivered(m0!, clock.now),
      answered(m1!, clock.now, 503, { status: 'pending', nextAttemptAt: clock.now + 600_000, error: 'HTTP 503' }),
    ])
    expect(await claim(store, 'relay-b')).toEqual([])
    clock.now += LEASE + 1
    const again = await claim(store, 'relay-b')
    expect(ids(again)).toEqual(['m2', 'm3', 'm4'])
    await store.record(again.map((d) => delivered(d, clock.now)))
    expect(await count(pool, 'delivery_blocks')).toBe(0)
    // relay-a's late word on one relay-b delivered changes nothing but the requests log.
    await store.record([answered(rest[0]!, clock.now, 500, { status: 'failed', error: 'HTTP 500' })])
    const log = await store.list({ after: 0, limit: 10 })
    expect(log.map((d) => [d.messageId, d.status])).toEqual([
      ['m0', 'delivered'],
      ['m1', 'pending'],
      ['m2', 'delivered'],
      ['m3', 'delivered'],
      ['m4', 'delivered'],
    ])
    expect(log[1]!.attempts).toHaveLength(1)
  })

  it('lets another relay claim one released delivery of a block while its others stay leased', async () => {
    const clock = { now: T0 }
    const { store } = await open(clock)
    await store.enqueue(['m0', 'm1', 'm2'].map((id) => testDelivery(id)))
    const [, m1] = await claim(store, 'relay-a')
    await store.release('relay-a', [m1!.id])
    expect(ids(await claim(store, 'relay-b'))).toEqual(['m1'])
  })

  it('holds no claim back for a transaction left open elsewhere on the server', async () => {
    const clock = { now: T0 }
    const { store } = await open(clock)
    const elsewhere = new pg.Client({ connectionString: await freshPostgresDatabase() })
    await elsewhere.connect()
    try {
      await elsewhere.query('BEGIN')
      await elsewhere.query('SELECT pg_current_xact_id()')
      await store.enqueue([testDelivery('m1')])
      expect(ids(await claim(store, 'relay-a'))).toEqual(['m1'])
    } finally {
      await elsewhere.end()
    }
  })

  it('takes an update through the deliveries view for a delivery its block holds', async () => {
    const clock = { now: T0 }
    const { store, pool } = await open(clock)
    await store.enqueue(['m0', 'm1'].map((id) => testDelivery(id)))
    const [first] = await store.list({ after: 0, limit: 1 })
    await pool.query("UPDATE deliveries SET status = 'failed', last_error = 'by hand' WHERE id = $1", [first!.id])
    expect((await store.get(first!.id))?.status).toBe('failed')
    expect(ids(await claim(store, 'relay-a'))).toEqual(['m1'])
  })

  it('goes on with the queue rows written before the step, numbering new deliveries past them', async () => {
    const url = await freshPostgresDatabase()
    const pool = await openPool(url)
    await migrate(pool, MIGRATIONS.slice(0, -1))
    const clock = { now: T0 }
    await makeDaysAhead(pool, clock.now)
    const store = new PostgresStore(pool, { now: () => clock.now, databaseNow: () => clock.now })
    opened.push({ store, pool })
    await store.enqueue(['old0', 'old1'].map((id) => testDelivery(id)))
    expect(await count(pool, 'queue')).toBe(2)
    await migrate(pool)
    await store.enqueue(['new0'].map((id) => testDelivery(id)))
    const due = await claim(store, 'relay-a')
    expect(ids(due)).toEqual(['old0', 'old1', 'new0'])
    expect(due[2]!.id).toBeGreaterThan(due[1]!.id)
    await store.record(due.map((d) => delivered(d, clock.now)))
    expect([await count(pool, 'queue'), await count(pool, 'delivery_blocks')]).toEqual([0, 0])
  })
})
