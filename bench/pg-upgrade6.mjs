// The online upgrade from schema 5 to schema 6 on a big outbox (docs/postgres.md, "Upgrading to
// schema 6"): a fresh server, schema 5's tables filled with N deliveries (one in ten dead, one in
// ten pending, the rest delivered, each with its request), then the upgrade as a relay starting
// runs it: the online copy in batches, then the switch (the schema step, under its locks). Prints
// how long each part took and the longest a transaction held its locks: a batch (the migration
// lock only: relays of schema 5 keep writing), and the switch (deliveries locked against writes).
//
//   node bench/pg-upgrade6.mjs                   1,000,000 deliveries
//   node bench/pg-upgrade6.mjs --rows 200000
import { performance } from 'node:perf_hooks'
import { parseArgs } from 'node:util'
import { importSource } from './load-source.mjs'
import { timeTransactions } from './transaction-holds.mjs'

const { values: args } = parseArgs({ options: { rows: { type: 'string' } } })
const N = Number(args.rows ?? 1_000_000)

const ROWS = (from, to) => `
  INSERT INTO deliveries (source, destination, message_id, type, message, user_id, event, status, attempts,
    next_attempt_at, created_at, updated_at)
  SELECT 'web', 'Webhooks', gen_random_uuid()::text, 'track',
    json_build_object('type', 'track', 'userId', 'user-' || (i % 5000), 'event', 'Order Completed',
      'properties', json_build_object('orderId', 'o-' || i, 'revenue', 9.99))::text,
    'user-' || (i % 5000), 'Order Completed',
    CASE WHEN i % 10 = 1 THEN 'failed' WHEN i % 10 = 2 THEN 'pending' ELSE 'delivered' END,
    1, 1700000000000 + i, 1700000000000 + i, 1700000000000 + i
  FROM generate_series(${from}, ${to}) AS i;
  INSERT INTO attempts (delivery_id, at, url, status, ms)
  SELECT id, created_at, 'https://hooks.example/', CASE WHEN status = 'failed' THEN 500 ELSE 200 END, 3
  FROM deliveries WHERE id BETWEEN ${from} AND ${to};`

const src = await importSource(`
  export { openPool } from './src/relay/kit/postgres/pool'
  export { migrate, MIGRATIONS } from './src/relay/store/postgres/schema'
  export { POSTGRES_SCHEMA6_STEP } from './src/relay/store/postgres/schema6'
  export { copyToSchema6Online } from './src/relay/store/postgres/upgrade6'
  export { prepareAttemptsByDay } from './src/relay/store/postgres/prepare-attempts'
  export { addLogSink } from './src/relay/log'
`)
const { startPostgresServer } = await import('../test/support/postgres-server.mjs')
const server = await startPostgresServer({ durable: true })
try {
  const url = await server.createDatabase('upgrade6')
  const pool = await src.openPool(url, { max: 4, storeTimeout: 600_000 })
  await pool.query('CREATE TABLE tracklet_schema (version integer NOT NULL)')
  const schema5 = src.MIGRATIONS.slice(0, src.MIGRATIONS.indexOf(src.POSTGRES_SCHEMA6_STEP))
  for (const step of schema5) await pool.query(step)
  await pool.query('INSERT INTO tracklet_schema (version) VALUES ($1)', [schema5.length])
  for (let from = 1; from <= N; from += 100_000) await pool.query(ROWS(from, Math.min(N, from + 99_999)))
  await pool.query('VACUUM ANALYZE deliveries, attempts')
  console.log(`schema 5 outbox of ${N.toLocaleString('en-US')} deliveries written; upgrading`)

  // Each transaction's length, BEGIN to COMMIT, as its locks are held that long.
  const { holds } = timeTransactions(pool)
  const lines = []
  const stop = src.addLogSink((event) => lines.push(event.msg))
  const started = performance.now()
  await src.copyToSchema6Online(pool)
  const copied = performance.now()
  const batches = holds.splice(0)
  // The requests log's new key, built without blocking writers before the switch (as a relay starts).
  await src.prepareAttemptsByDay(pool)
  const prepared = performance.now()
  await src.migrate(pool)
  const switched = performance.now()
  stop()
  const [switchHold] = holds
  console.log(lines.filter((l) => l.includes('schema 6')).join('\n'))
  console.log(
    `online copy: ${((copied - started) / 1000).toFixed(1)} s in ${batches.length} transactions, the longest ${Math.max(...batches).toFixed(0)} ms`,
  )
  console.log(`the requests log's key built ahead (no lock on writers): ${((prepared - copied) / 1000).toFixed(2)} s`)
  console.log(
    `switch (the schema steps, deliveries locked against writes): ${((switched - prepared) / 1000).toFixed(2)} s, held ${switchHold?.toFixed(0)} ms`,
  )
  const { rows } = await pool.query('SELECT count(*)::int AS n FROM messages')
  console.log(`messages after: ${rows[0].n.toLocaleString('en-US')}`)
  await pool.end()
} finally {
  await server.stop()
}
