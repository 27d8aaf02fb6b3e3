import { afterEach, describe, expect, it } from 'vitest'
import { ATTEMPTS_DAY_KEY, POSTGRES_ATTEMPTS_BY_DAY_STEP } from '../../../src/relay/store/postgres/attempts-by-day'
import { prepareAttemptsByDay } from '../../../src/relay/store/postgres/prepare-attempts'
import { DAY_MS, makeDaysAhead, partitionName } from '../../../src/relay/store/postgres/partitions'
import { openPool, type PostgresPool } from '../../../src/relay/kit/postgres/pool'
import type { PostgresStore } from '../../../src/relay/store/postgres/postgres-store'
import { MIGRATIONS, migrate } from '../../../src/relay/store/postgres/schema'
import { freshPostgresDatabase, sql } from '../../support/postgres'
import { testDelivery } from '../fixtures/deliveries'
import { openPostgresStoreWithPool } from '../fixtures/store'

// Schema 6's requests log by day (docs/postgres.md, "Retention"): a delivery's requests live in
// its day's partition and go with the day, whole; a dead letter's are kept with it.
const DAY0 = Date.parse('2026-03-01T10:00:00.000Z')
const DAY0_START = Date.parse('2026-03-01T00:00:00.000Z')

let opened: { store: PostgresStore; pool: PostgresPool } | undefined
afterEach(async () => {
  await opened?.store.close()
  opened = undefined
})

async function deliver(store: PostgresStore, at: number, status: number): Promise<void> {
  const due = await store.claim({ source: 'web', limit: 1, owner: 'relay-a', leaseMs: 30_000 })
  await store.record(
    due.map((d) => ({
      id: d.id,
      at,
      requests: [{ url: 'https://hooks.example/', status, ms: 3 }],
      next: status === 200 ? { status: 'delivered' as const } : { status: 'failed' as const, error: `HTTP ${status}` },
    })),
  )
}

// A fresh database brought up to the step before this one, as the previous version left it.
async function databaseBeforeTheStep(): Promise<string> {
  const url = await freshPostgresDatabase()
  const before = MIGRATIONS.slice(0, MIGRATIONS.indexOf(POSTGRES_ATTEMPTS_BY_DAY_STEP))
  await sql(url, 'CREATE TABLE tracklet_schema (version integer NOT NULL)')
  for (const text of before) await sql(url, text)
  await sql(url, 'INSERT INTO tracklet_schema (version) VALUES ($1)', [before.length])
  return url
}

const tableExists = async (pool: PostgresPool, name: string) =>
  (await pool.query('SELECT 1 FROM pg_class WHERE relname = $1', [name])).rows.length === 1

describe('the requests log by day on PostgreSQL', () => {
  it('writes a delivery’s requests into its day and drops them with the day, keeping a dead letter’s', async () => {
    const clock = { now: DAY0 }
    opened = await openPostgresStoreWithPool(() => clock.now)
    const { store, pool } = opened
    await makeDaysAhead(pool, clock.now)
    await store.enqueue([testDelivery('delivered'), testDelivery('dead')])
    await deliver(store, clock.now, 200)
    await deliver(store, clock.now, 410)
    const [delivered, dead] = (await store.list({ after: 0, limit: 10 })).map((d) => d.id)
    const where = await pool.query<{ name: string; n: number }>(
      'SELECT tableoid::regclass::text AS name, count(*)::int AS n FROM attempts GROUP BY 1',
    )
    expect(where.rows).toEqual([{ name: partitionName('attempts', DAY0_START), n: 2 }])

    clock.now += 3 * DAY_MS
    expect(await store.prune(clock.now - DAY_MS, 1000)).toBe(1)

    expect(await tableExists(pool, partitionName('attempts', DAY0_START))).toBe(false)
    const left = await pool.query('SELECT delivery_id::int AS id, tableoid::regclass::text AS name FROM attempts')
    expect(left.rows).toEqual([{ id: dead, name: 'attempts_kept' }])
    expect(await store.get(delivered!)).toBeUndefined()
    expect((await store.get(dead!))?.attempts.map((a) => a.status)).toEqual([410])
  })

  it('takes over the requests written before it, in order, numbers new ones after them, and takes the previous version’s', async () => {
    // A database one step before, as the previous version left it: a dead letter with three requests.
    const url = await databaseBeforeTheStep()
    await sql(
      url,
      `INSERT INTO messages (id, created_at, source, destination, message_id, type, message)
       VALUES (1, $1, 'web', 'Webhooks', 'old', 'track', $2)`,
      [DAY0, testDelivery('old').json],
    )
    await sql(
      url,
      `INSERT INTO queue (id, created_at, source, destination, status, attempts, next_attempt_at, updated_at, last_error)
       VALUES (1, $1, 'web', 'Webhooks', 'failed', 3, $1, $1, 'HTTP 503')`,
      [DAY0],
    )
    await sql(url, "SELECT setval('delivery_ids', 2, false)")
    await sql(
      url,
      `INSERT INTO attempts (delivery_id, at, url, status, ms)
       SELECT 1, $1::bigint + i, 'https://hooks.example/', 500 + i, 4 FROM generate_series(1, 3) AS i`,
      [DAY0],
    )

    const clock = { now: DAY0 + DAY_MS }
    opened = await openPostgresStoreWithPool(() => clock.now, url)
    const { store, pool } = opened
    await makeDaysAhead(pool, clock.now)
    expect((await store.get(1))?.attempts.map((a) => a.status)).toEqual([501, 502, 503])

    // Retried and sent by this version: its request comes after the three, beside its message in the
    // kept partition (its day, written before the days were made, has none of its own).
    expect(await store.retry(1)).toBe('retried')
    await deliver(store, clock.now, 200)
    expect((await store.get(1))?.attempts.map((a) => a.status)).toEqual([501, 502, 503, 200])
    const places = await pool.query<{ status: number; name: string }>(
      'SELECT status, tableoid::regclass::text AS name FROM attempts ORDER BY id',
    )
    expect(places.rows.map((r) => r.name)).toEqual(['attempts_kept', 'attempts_kept', 'attempts_kept', 'attempts_kept'])
    expect(await tableExists(pool, partitionName('attempts', DAY0_START + DAY_MS))).toBe(true)

    // A relay of the previous version still running writes a request its way (no created_at, no
    // id): it lands in the kept partition, numbered after the others.
    await sql(url, "INSERT INTO attempts (delivery_id, at, url, status, ms) VALUES (1, 9, 'https://old/', 202, 4)")
    expect((await store.get(1))?.attempts.map((a) => a.status)).toEqual([501, 502, 503, 200, 202])
  })

  it('builds the new key ahead without a lock on writers, and the step uses it instead of building its own', async () => {
    const url = await databaseBeforeTheStep()
    await sql(
      url,
      `INSERT INTO attempts (delivery_id, at, url, status, ms)
       SELECT i, i, 'https://hooks.example/', 200, 4 FROM generate_series(1, 50) AS i`,
    )
    const pool = await openPool(url)
    try {
      await prepareAttemptsByDay(pool)
      // A build cut short leaves an invalid index: the next start drops it and builds it again.
      await sql(url, `UPDATE pg_index SET indisvalid = false WHERE indexrelid = '${ATTEMPTS_DAY_KEY}'::regclass`)
      await prepareAttemptsByDay(pool)
      const key = await sql<{ oid: number; valid: boolean }>(
        url,
        `SELECT indexrelid::int AS oid, indisvalid AS valid FROM pg_index WHERE indexrelid = '${ATTEMPTS_DAY_KEY}'::regclass`,
      )
      expect(key.map((k) => k.valid)).toEqual([true])

      await migrate(pool)
      // The kept partition's primary key is that very index (same oid, renamed), and no other was built.
      const indexes = await sql<{ oid: number; name: string; primary: boolean }>(
        url,
        `SELECT i.indexrelid::int AS oid, i.indexrelid::regclass::text AS name, i.indisprimary AS primary
         FROM pg_index i WHERE i.indrelid = 'attempts_kept'::regclass ORDER BY 2`,
      )
      expect(indexes).toEqual([
        { oid: key[0]!.oid, name: 'attempts_kept_pkey', primary: true },
        expect.objectContaining({ name: 'attempts_kept_url', primary: false }),
      ])
      expect((await sql<{ n: number }>(url, 'SELECT count(*)::int AS n FROM attempts'))[0]!.n).toBe(50)
      // Upgraded already: nothing more to prepare.
      await prepareAttemptsByDay(pool)
    } finally {
      await pool.end()
    }
  })
})
