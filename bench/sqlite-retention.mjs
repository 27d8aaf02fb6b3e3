// Retention on SQLite, two layouts compared on a store of 1,000,000 deliveries over 10 days
// (100,000 a day: 98 % delivered with one attempt each, 1 % dead-lettered, 1 % pending):
//
// - delete: the store as built, one table; the relay's sweep (RetentionSweeper: store.prune in
//   chunks of 1,000, each its own short transaction) deletes the oldest day's settled rows.
// - table per day: the same tables, one pair per day; a day goes by moving its pending and dead
//   rows into the newest day's table, then dropping its two tables, in one transaction (a drop
//   cannot be cut into chunks).
//
// For each: the time to prune a day, the longest time one transaction holds the writer (and, on
// the relay, the event loop: the driver is synchronous), the WAL's largest size during it, the
// file's size before and after (and its free pages), and ingest while it runs (batches of 100
// enqueued between the prune's transactions; with a day per table, before and after it).
//
//   node bench/sqlite-retention.mjs [--rows 1000000]
import { mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import Database from 'better-sqlite3'
import { importSource } from './load-source.mjs'

const { values: args } = parseArgs({ options: { rows: { type: 'string' } } })
const ROWS = Number(args.rows ?? 1_000_000)
const DAYS = 10
const PER_DAY = ROWS / DAYS
const DAY_MS = 86_400_000
const T0 = Date.parse('2026-01-01T00:00:00.000Z')
const STEP = DAY_MS / PER_DAY
const PRUNE_CHUNK = 1000 // as src/relay/store/retention.ts
const INGEST_BATCH = 100

const dir = mkdtempSync(join(tmpdir(), 'tracklet-retention-bench-'))
const { openSqliteStore } = await importSource(
  `export { openSqliteStore } from './src/relay/store/sqlite/sqlite-store'`,
)

// Rows [from, to) of `table`, row i updated at T0 + i * STEP (so day k holds rows k * PER_DAY onwards).
const fill = (table) => `
  WITH RECURSIVE n(i) AS (SELECT @from UNION ALL SELECT i + 1 FROM n WHERE i + 1 < @to)
  INSERT INTO ${table} (id, source, destination, message_id, type, message, user_id, event, status, attempts,
    next_attempt_at, created_at, updated_at)
  SELECT i + 1, 'web', 'Webhooks', 'm-' || i, 'track',
    '{"type":"track","messageId":"m-' || i || '","userId":"user-' || (i % 100000) || '","event":"Order Completed","properties":{"orderId":"o-' || i || '","revenue":9.99,"currency":"EUR","items":["a","b"]}}',
    'user-' || (i % 100000), 'Order Completed',
    CASE WHEN i % 100 = 0 THEN 'failed' WHEN i % 100 = 1 THEN 'pending' ELSE 'delivered' END, 1,
    @t0 + CAST(i * @step AS INTEGER), @t0 + CAST(i * @step AS INTEGER), @t0 + CAST(i * @step AS INTEGER)
  FROM n`
const fillAttempts = (attempts, deliveries) => `
  INSERT INTO ${attempts} (delivery_id, at, url, status, ms)
  SELECT id, updated_at, 'https://hooks.example/a', 200, 5 FROM ${deliveries} WHERE status = 'delivered'`

const newDelivery = (i) => ({
  source: 'web',
  destination: 'Webhooks',
  messageId: `new-${i}`,
  type: 'track',
  json: JSON.stringify({ type: 'track', messageId: `new-${i}`, userId: `user-${i}`, event: 'Order Completed' }),
})

const sizes = (file, db) => ({
  fileMB: statSync(file).size / 1e6,
  freePages: db.pragma('freelist_count', { simple: true }),
})
const walMB = (file) => {
  try {
    return statSync(`${file}-wal`).size / 1e6
  } catch {
    return 0
  }
}

let ingested = 0
async function ingestBatch(store) {
  const batch = Array.from({ length: INGEST_BATCH }, () => newDelivery(ingested++))
  const started = performance.now()
  await store.enqueue(batch)
  return performance.now() - started
}

async function ingestAlone(store, batches) {
  let ms = 0
  for (let b = 0; b < batches; b++) ms += await ingestBatch(store)
  return (batches * INGEST_BATCH) / (ms / 1000)
}

const report = (name, r) =>
  console.log(
    `${name.padEnd(14)} prune a day ${r.pruneMs.toFixed(0).padStart(6)} ms; longest hold ${r.longestMs.toFixed(0).padStart(5)} ms${r.medianHoldMs === undefined ? '' : ` (median ${r.medianHoldMs.toFixed(1)})`}; ` +
      `WAL up to ${r.walMB.toFixed(1)} MB; file ${r.before.fileMB.toFixed(0)} → ${r.after.fileMB.toFixed(0)} MB ` +
      `(${r.after.freePages} free pages); ingest alone ${Math.round(r.ingestAlone)} msgs/s, between the prune's transactions ${r.ingestBatches ? `${Math.round(r.ingestDuring)} msgs/s (${r.ingestBatches} batches)` : 'none: one transaction'}`,
  )

async function deleteLayout() {
  const file = join(dir, 'delete.db')
  const db = new Database(file)
  db.close()
  const store = await openSqliteStore(file, () => T0 + DAYS * DAY_MS)
  const raw = new Database(file)
  raw.pragma('journal_mode = WAL')
  const insert = raw.prepare(fill('deliveries'))
  for (let from = 0; from < ROWS; from += 100_000)
    raw.transaction(() => insert.run({ from, to: Math.min(ROWS, from + 100_000), t0: T0, step: STEP }))()
  raw.exec(fillAttempts('attempts', 'deliveries'))
  raw.pragma('wal_checkpoint(TRUNCATE)')
  const alone = await ingestAlone(store, 50)
  raw.pragma('wal_checkpoint(TRUNCATE)')
  const before = sizes(file, raw)

  let wal = 0
  const holds = []
  let pruned = 0
  let batches = 0
  let ingestMs = 0
  const started = performance.now()
  for (;;) {
    const t = performance.now()
    const deleted = await store.prune(T0 + DAY_MS, PRUNE_CHUNK)
    holds.push(performance.now() - t)
    pruned += deleted
    wal = Math.max(wal, walMB(file))
    if (deleted < PRUNE_CHUNK) break
    ingestMs += await ingestBatch(store)
    batches++
  }
  const pruneMs = performance.now() - started - ingestMs
  raw.pragma('wal_checkpoint(TRUNCATE)')
  const after = sizes(file, raw)
  const kept = raw.prepare(`SELECT count(*) FROM deliveries WHERE updated_at < ? AND status IN ('pending', 'failed')`)
  const keptOld = kept.pluck().get(T0 + DAY_MS)
  raw.close()
  await store.close()
  if (keptOld !== PER_DAY / 50) throw new Error(`the day's pending and dead deliveries were not all kept: ${keptOld}`)
  return {
    pruneMs,
    longestMs: Math.max(...holds),
    medianHoldMs: holds.sort((a, b) => a - b)[holds.length >> 1],
    walMB: wal,
    before,
    after,
    pruned,
    ingestAlone: alone,
    // Each batch's own time: what the prune's work between them leaves ingest.
    ingestDuring: (batches * INGEST_BATCH) / (ingestMs / 1000),
    ingestBatches: batches,
  }
}

async function tablePerDayLayout() {
  const file = join(dir, 'per-day.db')
  const store = await openSqliteStore(file, () => T0 + DAYS * DAY_MS)
  const raw = new Database(file)
  raw.pragma('journal_mode = WAL')
  raw.pragma('foreign_keys = ON')
  const schema = raw
    .prepare(`SELECT sql FROM sqlite_master WHERE tbl_name IN ('deliveries', 'attempts') AND sql IS NOT NULL`)
    .pluck()
    .all()
  for (let day = 0; day < DAYS; day++) {
    // The tables' and indexes' names (after TABLE, INDEX, ON, REFERENCES), never a column's.
    const rename = /\b(TABLE|INDEX|ON|REFERENCES)(\s+"?)(deliveries|attempts)(_\w+)?/g
    for (const sql of schema) raw.exec(sql.replace(rename, `$1$2$3_d${day}$4`))
    const insert = raw.prepare(fill(`deliveries_d${day}`))
    raw.transaction(() => insert.run({ from: day * PER_DAY, to: (day + 1) * PER_DAY, t0: T0, step: STEP }))()
    raw.exec(fillAttempts(`attempts_d${day}`, `deliveries_d${day}`))
  }
  raw.pragma('wal_checkpoint(TRUNCATE)')
  // Ingest goes to the store's own tables here: the newest day's, as it would be.
  const alone = await ingestAlone(store, 50)
  raw.pragma('wal_checkpoint(TRUNCATE)')
  const before = sizes(file, raw)

  const newest = `d${DAYS - 1}`
  const dropDay = raw.transaction(() => {
    raw.exec(`INSERT INTO deliveries_${newest} SELECT * FROM deliveries_d0 WHERE status IN ('pending', 'failed')`)
    raw.exec(`INSERT INTO attempts_${newest} SELECT * FROM attempts_d0 WHERE delivery_id IN
      (SELECT id FROM deliveries_d0 WHERE status IN ('pending', 'failed'))`)
    raw.exec('DROP TABLE attempts_d0')
    raw.exec('DROP TABLE deliveries_d0')
  })
  const started = performance.now()
  dropDay.immediate()
  const pruneMs = performance.now() - started
  const wal = walMB(file)
  raw.pragma('wal_checkpoint(TRUNCATE)')
  const after = sizes(file, raw)
  const keptOld = raw
    .prepare(`SELECT count(*) FROM deliveries_${newest} WHERE updated_at < ? AND status IN ('pending', 'failed')`)
    .pluck()
    .get(T0 + DAY_MS)
  raw.close()
  await store.close()
  if (keptOld !== PER_DAY / 50) throw new Error(`the day's pending and dead deliveries were not all kept: ${keptOld}`)
  return {
    pruneMs,
    longestMs: pruneMs,
    walMB: wal,
    before,
    after,
    ingestAlone: alone,
    // One transaction: no batch gets in until it ends.
    ingestDuring: 0,
    ingestBatches: 0,
  }
}

try {
  report('delete', await deleteLayout())
  report('table per day', await tablePerDayLayout())
} finally {
  rmSync(dir, { recursive: true, force: true })
}
