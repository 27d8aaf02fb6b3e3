// The operator's searches among 1,000,000 deliveries, on each store: by messageId, by userId (with
// and without a status), by status alone, dead-letter counts for a bulk replay, the unfiltered
// first page, and the backlog /metrics and the overview read.
// Each search runs through the store's own methods (find, retryMatching with dryRun), the
// statements the admin API will use; the target is under 100 ms each.
//
//   node bench/store-search.mjs                      both stores, 1,000,000 rows
//   node bench/store-search.mjs --store sqlite --rows 200000
//
// The rows are written straight into the tables the store created (one INSERT … SELECT per
// chunk, far faster than the ingest path, which is not what is measured here): 90 % delivered,
// 5 % dead-lettered, 5 % pending, 10 deliveries per user, each with its own messageId.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { startPostgresServer } from '../test/support/postgres-server.mjs'
import { importSource } from './load-source.mjs'

const { values: args } = parseArgs({
  options: { store: { type: 'string' }, rows: { type: 'string' }, runs: { type: 'string' } },
})
const ROWS = Number(args.rows ?? 1_000_000)
const RUNS = Number(args.runs ?? 25)
const STORES = args.store ? [args.store] : ['sqlite', 'postgres']
const USERS = Math.max(1, Math.floor(ROWS / 10))
const T0 = Date.parse('2026-01-01T00:00:00.000Z')

const dir = mkdtempSync(join(tmpdir(), 'tracklet-search-bench-'))

function loadStores() {
  return importSource(`
    export { openSqliteStore } from './src/relay/store/sqlite/sqlite-store'
    export { openPostgresStore } from './src/relay/store/postgres/postgres-store'`)
}

// Row i, as the SQL below builds it: status by i % 20, user by i % USERS, created one ms apart.
const FILL_SQLITE = `
  WITH RECURSIVE n(i) AS (SELECT @from UNION ALL SELECT i + 1 FROM n WHERE i + 1 < @to)
  INSERT INTO deliveries (source, destination, message_id, type, message, user_id, event, status, attempts,
    next_attempt_at, created_at, updated_at)
  SELECT 'web', 'Webhooks', 'm-' || i, 'track',
    '{"type":"track","messageId":"m-' || i || '","userId":"user-' || (i % @users) || '","event":"Order Completed","properties":{"revenue":39.95}}',
    'user-' || (i % @users), 'Order Completed',
    CASE WHEN i % 20 = 0 THEN 'failed' WHEN i % 20 = 1 THEN 'pending' ELSE 'delivered' END, 1,
    @t0 + i, @t0 + i, @t0 + i
  FROM n`

const FILL_POSTGRES = `
  INSERT INTO deliveries (source, destination, message_id, type, message, user_id, event, status, attempts,
    next_attempt_at, created_at, updated_at)
  SELECT 'web', 'Webhooks', 'm-' || i, 'track',
    '{"type":"track","messageId":"m-' || i || '","userId":"user-' || (i % $3) || '","event":"Order Completed","properties":{"revenue":39.95}}',
    'user-' || (i % $3), 'Order Completed',
    CASE WHEN i % 20 = 0 THEN 'failed' WHEN i % 20 = 1 THEN 'pending' ELSE 'delivered' END, 1,
    $4 + i, $4 + i, $4 + i
  FROM generate_series($1::bigint, $2::bigint - 1) AS i`

const CHUNK = 100_000

async function fill(kind, database) {
  const started = performance.now()
  if (kind === 'sqlite') {
    const { default: Database } = await import('better-sqlite3')
    const db = new Database(database)
    const insert = db.prepare(FILL_SQLITE)
    for (let from = 0; from < ROWS; from += CHUNK) {
      // BigInts: bound as INTEGER (a JS number is bound as REAL, and would be written `m-1.0`).
      const params = {
        from: BigInt(from),
        to: BigInt(Math.min(ROWS, from + CHUNK)),
        users: BigInt(USERS),
        t0: BigInt(T0),
      }
      db.transaction(() => insert.run(params))()
    }
    db.exec('ANALYZE')
    db.close()
  } else {
    const { default: pg } = await import('pg')
    const client = new pg.Client({ connectionString: database })
    await client.connect()
    for (let from = 0; from < ROWS; from += CHUNK) {
      await client.query(FILL_POSTGRES, [from, Math.min(ROWS, from + CHUNK), USERS, T0])
    }
    await client.query('VACUUM ANALYZE deliveries')
    await client.end()
  }
  return performance.now() - started
}

function pick(i) {
  // Spread over the whole table: old, middle and new rows.
  return Math.floor(((i * 7919) % RUNS) * (ROWS / RUNS))
}

async function time(label, run) {
  await run(0) // warm the statement and the cache once
  const ms = []
  for (let i = 0; i < RUNS; i++) {
    const started = performance.now()
    await run(i)
    ms.push(performance.now() - started)
  }
  ms.sort((a, b) => a - b)
  const at = (p) => ms[Math.min(ms.length - 1, Math.ceil(p * ms.length) - 1)]
  return { label, p50: at(0.5), p95: at(0.95), max: ms.at(-1) }
}

async function measure(kind, stores, server) {
  const database = kind === 'sqlite' ? join(dir, 'search.db') : await server.createDatabase('search')
  // Open once to create the schema, then fill the tables directly, then open again to measure.
  const open = () => (kind === 'sqlite' ? stores.openSqliteStore(database) : stores.openPostgresStore(database))
  await (await open()).close()
  const fillMs = await fill(kind, database)
  const store = await open()
  try {
    const results = [
      await time('messageId (find, 50)', async (i) => {
        const page = await store.find({ messageId: `m-${pick(i)}`, limit: 50 })
        if (page.deliveries.length !== 1) throw new Error(`messageId search found ${page.deliveries.length}`)
      }),
      await time('userId (find, 50)', async (i) => {
        const page = await store.find({ userId: `user-${pick(i) % USERS}`, limit: 50 })
        if (page.deliveries.length !== Math.min(10, ROWS)) throw new Error('userId search found the wrong rows')
      }),
      await time('userId + status failed (find, 50)', async (i) => {
        await store.find({ userId: `user-${(pick(i) - (pick(i) % 20)) % USERS}`, status: 'failed', limit: 50 })
      }),
      await time('userId dead letters (retryMatching dryRun)', async (i) => {
        await store.retryMatching({ userId: `user-${pick(i) % USERS}` }, { dryRun: true })
      }),
      await time('newest page, no filter (find, 50)', async () => {
        await store.find({ limit: 50 })
      }),
      await time('status failed, page 2 (find, 50, cursor)', async () => {
        const first = await store.find({ status: 'failed', limit: 50 })
        await store.find({ status: 'failed', limit: 50, cursor: first.next })
      }),
      await time('status pending, page 2 (find, 50, cursor)', async () => {
        const first = await store.find({ status: 'pending', limit: 50 })
        await store.find({ status: 'pending', limit: 50, cursor: first.next })
      }),
      await time('status delivered (find, 50)', async () => {
        await store.find({ status: 'delivered', limit: 50 })
      }),
      await time('all dead letters (retryMatching dryRun)', async () => {
        await store.retryMatching({}, { dryRun: true })
      }),
      await time('backlog (metrics, overview)', async () => {
        await store.backlog()
      }),
    ]
    return { kind, fillMs, results }
  } finally {
    await store.close()
  }
}

const stores = await loadStores()
const server = STORES.includes('postgres') ? await startPostgresServer({ durable: true }) : undefined
try {
  for (const kind of STORES) {
    const { fillMs, results } = await measure(kind, stores, server)
    console.log(
      `\n${kind}: ${ROWS.toLocaleString('en')} deliveries (filled in ${(fillMs / 1000).toFixed(1)} s), ${RUNS} runs each`,
    )
    console.log('| search | p50 ms | p95 ms | max ms |')
    console.log('| --- | ---: | ---: | ---: |')
    for (const r of results)
      console.log(`| ${r.label} | ${r.p50.toFixed(2)} | ${r.p95.toFixed(2)} | ${r.max.toFixed(2)} |`)
  }
} finally {
  await server?.stop()
  rmSync(dir, { recursive: true, force: true })
}
