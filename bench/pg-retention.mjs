// Retention of a day of 1,000,000 deliveries on PostgreSQL schema 6 (docs/postgres.md,
// "Schema 6: what runs"): the relay's way, a day's partitions of messages, outcomes and attempts
// detached and dropped whole (after its pending and dead deliveries' messages and requests are
// copied to the kept partitions), against the row-by-row way schema 5 pruned, in the same run: an
// identical second day deleted by the store's own `prune` statement, 1,000 settled deliveries a
// statement, as the retention sweep runs it.
//
// Each day: N deliveries, 98 % delivered, 1 % dead, 1 % pending, one request each. Printed for
// each way: the time, the longest transaction (how long its locks were held), the WAL it wrote,
// and the rows left.
//
//   node bench/pg-retention.mjs              1,000,000 deliveries a day
//   node bench/pg-retention.mjs --rows 200000
//   node bench/pg-retention.mjs --drop-only   (the relay's way alone: row by row takes minutes)
import { performance } from 'node:perf_hooks'
import { parseArgs } from 'node:util'
import { importSource } from './load-source.mjs'
import { timeTransactions } from './transaction-holds.mjs'

const { values: args } = parseArgs({ options: { rows: { type: 'string' }, 'drop-only': { type: 'boolean' } } })
const N = Number(args.rows ?? 1_000_000)
const DAY_MS = 86_400_000
const DAY0 = Date.parse('2026-03-01T00:00:00.000Z')
const CHUNK = 1000 // as the retention sweep (src/relay/store/retention.ts)

const src = await importSource(`
  export { openPool } from './src/relay/kit/postgres/pool'
  export { migrate } from './src/relay/store/postgres/schema'
  export { makeDaysAhead } from './src/relay/store/postgres/partitions'
  export { PostgresStore } from './src/relay/store/postgres/postgres-store'
  export { POSTGRES_STATEMENTS } from './src/relay/store/postgres/statements'
`)
const { startPostgresServer } = await import('../test/support/postgres-server.mjs')

// Deliveries [from, to] of the day starting at `day`, spread over it; i % 100: 0 dead, 1 pending.
const FILL = (day, from, to) => `
  INSERT INTO messages (id, created_at, source, destination, message_id, type, message, user_id, event)
  SELECT i, ${day} + (i - ${from}) * ${Math.floor(DAY_MS / N)}, 'web', 'Webhooks', md5(i::text)::uuid::text, 'track',
    json_build_object('type', 'track', 'userId', 'user-' || (i % 100000), 'event', 'Order Completed',
      'properties', json_build_object('orderId', 'o-' || i, 'revenue', 9.99))::text,
    'user-' || (i % 100000), 'Order Completed'
  FROM generate_series(${from}, ${to}) AS i;
  INSERT INTO outcomes (id, created_at, status, attempts, first_attempt_at, settled_at)
  SELECT id, created_at, 'delivered', 1, created_at, created_at + 5 FROM messages
  WHERE id BETWEEN ${from} AND ${to} AND id % 100 > 1;
  INSERT INTO queue (id, created_at, source, destination, status, attempts, next_attempt_at, updated_at, last_error)
  SELECT id, created_at, source, destination, CASE WHEN id % 100 = 0 THEN 'failed' ELSE 'pending' END,
    1, created_at + ${30 * DAY_MS}::bigint, created_at, 'HTTP 503'
  FROM messages WHERE id BETWEEN ${from} AND ${to} AND id % 100 <= 1;
  INSERT INTO attempts (delivery_id, at, url, status, ms, created_at)
  SELECT id, created_at, 'https://hooks.example/', CASE WHEN id % 100 <= 1 THEN 503 ELSE 200 END, 5, created_at
  FROM messages WHERE id BETWEEN ${from} AND ${to};`

const server = await startPostgresServer({ durable: true })
try {
  const url = await server.createDatabase('retention')
  const pool = await src.openPool(url, { max: 4, storeTimeout: 600_000 })
  await src.migrate(pool)
  await src.makeDaysAhead(pool, DAY0) // day 0, day 1 (and day 2)
  for (const [day, first] of [
    [DAY0, 1],
    [DAY0 + DAY_MS, N + 1],
  ]) {
    for (let from = first; from < first + N; from += 100_000)
      await pool.query(FILL(day, from, Math.min(first + N - 1, from + 99_999)))
  }
  await pool.query(`SELECT setval('delivery_ids', ${2 * N + 1}, false)`)
  await pool.query('VACUUM ANALYZE messages, outcomes, queue, attempts')
  console.log(
    `two days of ${N.toLocaleString('en-US')} deliveries each written (98 % delivered, 1 % dead, 1 % pending)`,
  )

  // Each transaction's length, and from the detach on (every statement on messages waits for it).
  const { holds, fromHolds: locked } = timeTransactions(pool, { from: 'ALTER TABLE messages DETACH' })
  const wal = async () => (await pool.query('SELECT pg_current_wal_lsn() AS lsn')).rows[0].lsn
  const walSince = async (lsn) =>
    Number((await pool.query('SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), $1) AS bytes', [lsn])).rows[0].bytes)
  const left = async (table, day) =>
    (
      await pool.query(`SELECT count(*)::int AS n FROM ${table} WHERE created_at >= $1 AND created_at < $2`, [
        day,
        day + DAY_MS,
      ])
    ).rows[0].n
  const measure = async (name, day, prune) => {
    await pool.query('CHECKPOINT')
    holds.length = 0
    locked.length = 0
    const lsn = await wal()
    const started = performance.now()
    const statements = await prune()
    const ms = performance.now() - started
    const bytes = await walSince(lsn)
    const rest = `messages ${await left('messages', day)}, attempts ${await left('attempts', day)}`
    console.log(
      `${name.padEnd(22)} ${(ms / 1000).toFixed(2).padStart(6)} s; ${String(statements).padStart(4)} statements; ${holds.length ? `longest transaction ${Math.max(...holds).toFixed(0)} ms` : 'each statement its own transaction'}${locked.length ? ` (messages locked from the detach: ${Math.max(...locked).toFixed(0)} ms)` : ''}; WAL ${(bytes / 1e6).toFixed(1)} MB; left of the day: ${rest}`,
    )
    return { ms, bytes }
  }

  // The relay's way: the store's prune (its sweep) with day 0 past retention.
  const store = new src.PostgresStore(pool, { databaseNow: () => DAY0 + 3 * DAY_MS })
  const drop = await measure('drop the day (schema 6)', DAY0, async () => {
    await store.prune(DAY0 + DAY_MS, CHUNK)
    return 1
  })
  // Row by row: the store's prune statement over day 1, chunk after chunk, as schema 5's sweep.
  if (!args['drop-only']) {
    const rows = await measure('delete row by row', DAY0 + DAY_MS, async () => {
      let statements = 0
      for (;;) {
        statements++
        const { rows } = await pool.query(src.POSTGRES_STATEMENTS.prune, [DAY0 + 2 * DAY_MS, CHUNK])
        if (Number(rows[0].count) < CHUNK) return statements
      }
    })
    console.log(
      `drop ÷ row by row: time ${(drop.ms / rows.ms).toFixed(3)}×, WAL ${(drop.bytes / rows.bytes).toFixed(3)}×`,
    )
  }
  await store.close()
} finally {
  await server.stop()
}
