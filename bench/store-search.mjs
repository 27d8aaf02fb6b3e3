// The operator's searches among 1,000,000 deliveries, on each store: by messageId, by userId (with
// and without a status), by status alone, dead-letter counts for a bulk replay, the unfiltered
// first page, the backlog /metrics and the overview read, and a replay's count of what it matches
// (a day, with and without a status). Each search runs through the store's own methods (find,
// retryMatching with dryRun, replays.count), the statements the admin API uses; the aim is under
// 100 ms each (issue 28), and each line says whether it is.
//
//   node bench/store-search.mjs                      both stores, 1,000,000 rows
//   node bench/store-search.mjs --store sqlite --rows 200000
//   node bench/store-search.mjs --store postgres --only replay     the searches whose label has "replay"
//   node bench/store-search.mjs --store postgres --hold            fill, print the URL, wait (EXPLAIN by hand)
//
// The rows are written straight into the tables the store created (one INSERT … SELECT per
// chunk, far faster than the ingest path, which is not what is measured here): 90 % delivered,
// 5 % dead-lettered, 5 % pending, 10 deliveries per user, each with its own messageId, created
// evenly over the last 7 days (the default retention). On PostgreSQL (schema 6, docs/postgres.md)
// they go into messages (one day partition per day, named and made as the relay makes them),
// queue (pending and dead) and outcomes (delivered, partitioned as messages); on SQLite into
// the deliveries table.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { startPostgresServer } from '../test/support/postgres-server.mjs'
import { importSource } from './load-source.mjs'

const { values: args } = parseArgs({
  options: {
    store: { type: 'string' },
    rows: { type: 'string' },
    runs: { type: 'string' },
    only: { type: 'string' },
    hold: { type: 'boolean' },
  },
})
const ROWS = Number(args.rows ?? 1_000_000)
const RUNS = Number(args.runs ?? 25)
const STORES = args.store ? [args.store] : ['sqlite', 'postgres']
const USERS = Math.max(1, Math.floor(ROWS / 10))
const AIM_MS = 100

const stores = await importSource(`
  export { openSqliteStore } from './src/relay/store/sqlite/sqlite-store'
  export { openPostgresStore } from './src/relay/store/postgres/postgres-store'
  export { DAY_MS, dayOf, partitionName } from './src/relay/store/postgres/partitions'
  export { DELIVERY_IDS } from './src/relay/store/postgres/schema6'`)
const { DAY_MS, dayOf, partitionName, DELIVERY_IDS } = stores

// The rows span the 7 days before now: row i (id i + 1) is created at T0 + i * SPAN / ROWS.
const SPAN = 7 * DAY_MS
const T0 = Date.now() - SPAN
const createdAt = (i) => T0 + Math.floor((i * SPAN) / ROWS)
// A replay's window: one whole day in the middle of the span.
const REPLAY_DAY = { since: dayOf(T0) + 3 * DAY_MS, until: dayOf(T0) + 4 * DAY_MS - 1 }

const dir = mkdtempSync(join(tmpdir(), 'tracklet-search-bench-'))

// Row i, as the SQL below builds it: status by i % 20, user by i % USERS.
const FILL_SQLITE = `
  WITH RECURSIVE n(i) AS (SELECT @from UNION ALL SELECT i + 1 FROM n WHERE i + 1 < @to)
  INSERT INTO deliveries (id, source, destination, message_id, type, message, user_id, event, status, attempts,
    next_attempt_at, created_at, updated_at)
  SELECT i + 1, 'web', 'Webhooks', 'm-' || i, 'track',
    '{"type":"track","messageId":"m-' || i || '","userId":"user-' || (i % @users) || '","event":"Order Completed","properties":{"revenue":39.95}}',
    'user-' || (i % @users), 'Order Completed',
    CASE WHEN i % 20 = 0 THEN 'failed' WHEN i % 20 = 1 THEN 'pending' ELSE 'delivered' END, 1,
    @t0 + i * @span / @rows, @t0 + i * @span / @rows, @t0 + i * @span / @rows
  FROM n`

// PostgreSQL: $1 from, $2 to, $3 users, $4 T0, $5 span, $6 rows. One statement per table.
const ROWS_PG = 'generate_series($1::bigint, $2::bigint - 1) AS i'
const CREATED_PG = '($4::bigint + i * $5::bigint / $6::bigint)'
const FILL_POSTGRES = [
  `INSERT INTO messages (id, created_at, source, destination, message_id, type, message, user_id, event)
  SELECT i + 1, ${CREATED_PG}, 'web', 'Webhooks', 'm-' || i, 'track',
    '{"type":"track","messageId":"m-' || i || '","userId":"user-' || (i % $3) || '","event":"Order Completed","properties":{"revenue":39.95}}',
    'user-' || (i % $3), 'Order Completed'
  FROM ${ROWS_PG}`,
  `INSERT INTO queue (id, created_at, source, destination, status, attempts, first_attempt_at, next_attempt_at,
    updated_at)
  SELECT i + 1, ${CREATED_PG}, 'web', 'Webhooks', CASE WHEN i % 20 = 0 THEN 'failed' ELSE 'pending' END, 1,
    ${CREATED_PG}, ${CREATED_PG}, ${CREATED_PG}
  FROM ${ROWS_PG} WHERE i % 20 IN (0, 1) AND $3::bigint > 0`,
  `INSERT INTO outcomes (id, created_at, status, attempts, first_attempt_at, settled_at)
  SELECT i + 1, ${CREATED_PG}, 'delivered', 1, ${CREATED_PG}, ${CREATED_PG}
  FROM ${ROWS_PG} WHERE i % 20 NOT IN (0, 1) AND $3::bigint > 0`,
]

const CHUNK = 100_000

async function fillSqlite(database) {
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
      span: BigInt(SPAN),
      rows: BigInt(ROWS),
    }
    db.transaction(() => insert.run(params))()
  }
  db.exec('ANALYZE')
  db.close()
}

async function fillPostgres(database) {
  const { default: pg } = await import('pg')
  const client = new pg.Client({ connectionString: database })
  await client.connect()
  try {
    // The day partitions of the span, as the relay names and makes them (the store made today's).
    for (let day = dayOf(T0); day <= dayOf(Date.now()); day += DAY_MS) {
      for (const table of ['messages', 'outcomes']) {
        await client.query(
          `CREATE TABLE IF NOT EXISTS ${partitionName(table, day)} PARTITION OF ${table} FOR VALUES FROM (${day}) TO (${day + DAY_MS})`,
        )
      }
    }
    for (let from = 0; from < ROWS; from += CHUNK) {
      const values = [from, Math.min(ROWS, from + CHUNK), USERS, T0, SPAN, ROWS]
      for (const sql of FILL_POSTGRES) await client.query(sql, values)
    }
    await client.query(`SELECT setval('${DELIVERY_IDS}', $1::bigint + 1, false)`, [ROWS])
    await client.query('VACUUM ANALYZE messages, queue, outcomes')
  } finally {
    await client.end()
  }
}

function pick(i) {
  // Spread over the whole table: old, middle and new rows.
  return Math.floor(((i * 7919) % RUNS) * (ROWS / RUNS))
}

async function time(label, run) {
  if (args.only !== undefined && !label.includes(args.only)) return undefined
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

function expect(what, got, wanted) {
  if (got !== wanted) throw new Error(`${what}: got ${got}, expected ${wanted}`)
}

// Deliveries of row indexes in [from, to) whose i % 20 is `status`'s, counted as the fill made them.
function expected(from, to, remainders) {
  let n = 0
  for (let i = from; i < to; i++) if (remainders.includes(i % 20)) n++
  return n
}

// The row indexes a replay's day covers.
const dayRows = () => {
  const first = Math.ceil(((REPLAY_DAY.since - T0) * ROWS) / SPAN)
  let from = Math.max(0, first - 2)
  while (createdAt(from) < REPLAY_DAY.since) from++
  let to = from
  while (to < ROWS && createdAt(to) <= REPLAY_DAY.until) to++
  return [from, to]
}

async function searches(store) {
  const [dayFrom, dayTo] = dayRows()
  const all = [...Array(20).keys()]
  const delivered = all.filter((r) => r > 1)
  return [
    await time('messageId (find, 50)', async (i) => {
      const page = await store.find({ messageId: `m-${pick(i)}`, limit: 50 })
      expect('messageId search', page.deliveries.length, 1)
    }),
    await time('userId (find, 50)', async (i) => {
      const page = await store.find({ userId: `user-${pick(i) % USERS}`, limit: 50 })
      expect('userId search', page.deliveries.length, Math.min(10, ROWS))
    }),
    await time('userId + status failed (find, 50)', async (i) => {
      await store.find({ userId: `user-${(pick(i) - (pick(i) % 20)) % USERS}`, status: 'failed', limit: 50 })
    }),
    await time('userId dead letters (retryMatching dryRun)', async (i) => {
      await store.retryMatching({ userId: `user-${pick(i) % USERS}` }, { dryRun: true })
    }),
    await time('newest page, no filter (find, 50)', async () => {
      expect('newest page', (await store.find({ limit: 50 })).deliveries.length, 50)
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
      expect('delivered page', (await store.find({ status: 'delivered', limit: 50 })).deliveries.length, 50)
    }),
    await time('all dead letters (retryMatching dryRun)', async () => {
      expect('dead letters', (await store.retryMatching({}, { dryRun: true })).matched, expected(0, ROWS, [0]))
    }),
    await time('backlog (metrics, overview)', async () => {
      await store.backlog()
    }),
    await time('replay count, a day (replays.count)', async () => {
      expect('replay count', await store.replays.count({ ...REPLAY_DAY }), dayTo - dayFrom)
    }),
    await time('replay count, a day, status failed (replays.count)', async () => {
      expect(
        'replay count failed',
        await store.replays.count({ ...REPLAY_DAY, status: 'failed' }),
        expected(dayFrom, dayTo, [0]),
      )
    }),
    await time('replay count, a day, status delivered (replays.count)', async () => {
      expect(
        'replay count delivered',
        await store.replays.count({ ...REPLAY_DAY, status: 'delivered' }),
        expected(dayFrom, dayTo, delivered),
      )
    }),
  ].filter((r) => r !== undefined)
}

async function measure(kind, server) {
  const database = kind === 'sqlite' ? join(dir, 'search.db') : await server.createDatabase('search')
  // Open once to create the schema, then fill the tables directly, then open again to measure.
  const open = () => (kind === 'sqlite' ? stores.openSqliteStore(database) : stores.openPostgresStore(database))
  await (await open()).close()
  const started = performance.now()
  await (kind === 'sqlite' ? fillSqlite(database) : fillPostgres(database))
  const fillMs = performance.now() - started
  if (args.hold) {
    // The URL without its password (test/support/postgres-server.mjs has it): never printed.
    const where = kind === 'sqlite' ? database : database.replace(/:[^:@/]*@/, ':…@')
    console.log(`filled ${kind} in ${(fillMs / 1000).toFixed(1)} s: ${where} (Ctrl-C to end)`)
    await new Promise((resolve) => process.once('SIGINT', resolve))
    return { fillMs, results: [] }
  }
  const store = await open()
  try {
    return { fillMs, results: await searches(store) }
  } finally {
    await store.close()
  }
}

const server = STORES.includes('postgres') ? await startPostgresServer({ durable: true }) : undefined
try {
  for (const kind of STORES) {
    const { fillMs, results } = await measure(kind, server)
    console.log(
      `\n${kind}: ${ROWS.toLocaleString('en')} deliveries over 7 days (filled in ${(fillMs / 1000).toFixed(1)} s), ${RUNS} runs each`,
    )
    console.log(`| search | median ms | p95 ms | max ms | under ${AIM_MS} ms |`)
    console.log('| --- | ---: | ---: | ---: | --- |')
    for (const r of results) {
      const verdict = r.p95 < AIM_MS ? 'yes' : r.p50 < AIM_MS ? 'median only' : 'NO'
      console.log(`| ${r.label} | ${r.p50.toFixed(2)} | ${r.p95.toFixed(2)} | ${r.max.toFixed(2)} | ${verdict} |`)
    }
  }
} finally {
  await server?.stop()
  rmSync(dir, { recursive: true, force: true })
}
