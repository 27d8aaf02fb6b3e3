// node bench/pg-enqueue.mjs [--messages 30000] [--batch 200] [--writers 4] [--history 0]
//   [--days 0 --per-day 30000] [--key-index btree|hash] [--dedupe look-up|keys] [--shared-buffers 16MB]
//   [--queue-row each|none]
//
// Ingest's write alone on PostgreSQL: the store's enqueue (what group commit calls), `writers`
// at once, batches of `batch` messages with UUID ids as the SDK makes them, on a durable server.
// Prints msgs/s, the server's CPU and WAL per message, and the statements' server time per
// message (pg_stat_statements). `--history N` first writes N messages (not measured), so the
// duplicate check looks into a filled partition. For A/B runs of two builds of the store: whole
// process figures from outside, the printed ones from within. `--days N` first fills the N days
// before today, each its own partition of `per-day` messages (SQL, not measured): the duplicate
// check then reads N filled partitions more, as with N days of retention. `--key-index btree`
// makes the message key's index a B-tree again (as before the hash index's schema step).
// `--dedupe keys` swaps in the duplicate check by a key table (./dedupe-keys-prototype.mjs, not
// the store's). `--shared-buffers` sets the server's cache, so that a history outgrows it: the
// buffers the check reads from outside it are printed (from the OS's cache here; from the disk
// once the history outgrows memory too). `--queue-row none` swaps in ingest as range leases would
// write it (./range-ingest-prototype.mjs: no queue row, the safe cursor's column and index).
import { randomUUID } from 'node:crypto'
import { parseArgs } from 'node:util'
import pg from 'pg'
import { importSource } from './load-source.mjs'
import { measureServer } from './pg-server-cost.mjs'
import { resetStatements, statementTimes } from './pg-round-trips.mjs'
import { startPostgresServer } from '../test/support/postgres-server.mjs'
import { KEYS_PROTOTYPE } from './dedupe-keys-prototype.mjs'
import { RANGE_INGEST_PROTOTYPE } from './range-ingest-prototype.mjs'

const { values: args } = parseArgs({
  options: {
    messages: { type: 'string', default: '30000' },
    batch: { type: 'string', default: '200' },
    writers: { type: 'string', default: '4' },
    history: { type: 'string', default: '0' },
    days: { type: 'string', default: '0' },
    'per-day': { type: 'string', default: '30000' },
    'key-index': { type: 'string', default: 'hash' },
    'shared-buffers': { type: 'string' },
    dedupe: { type: 'string', default: 'look-up' },
    'queue-row': { type: 'string', default: 'each' },
  },
})
const [N, BATCH, WRITERS, HISTORY, DAYS, PER_DAY] = [
  args.messages,
  args.batch,
  args.writers,
  args.history,
  args.days,
  args['per-day'],
].map(Number)
const KEY_INDEX = args['key-index']
if (KEY_INDEX !== 'btree' && KEY_INDEX !== 'hash') throw new Error('--key-index is btree or hash')
const DAY_MS = 86_400_000
const DEDUPE = args.dedupe
if (DEDUPE !== 'look-up' && DEDUPE !== 'keys') throw new Error('--dedupe is look-up or keys')
const QUEUE_ROW = args['queue-row']
if (QUEUE_ROW !== 'each' && QUEUE_ROW !== 'none') throw new Error('--queue-row is each or none')
if (QUEUE_ROW === 'none' && DEDUPE === 'keys') throw new Error('--queue-row none is measured with --dedupe look-up')

// The N days before today, each a partition of `perDay` messages with UUID ids (random, as the
// SDK's), written by SQL in one statement a day; then analysed, as autovacuum would.
async function fillDays(url, days, perDay) {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    const today = Math.floor(Date.now() / DAY_MS) * DAY_MS
    for (let d = 1; d <= days; d++) {
      const day = today - d * DAY_MS
      const name = `messages_${new Date(day).toISOString().slice(0, 10).replaceAll('-', '_')}`
      await client.query(`CREATE TABLE ${name} PARTITION OF messages FOR VALUES FROM (${day}) TO (${day + DAY_MS})`)
      await client.query(
        `INSERT INTO messages (id, created_at, source, destination, message_id, type, message, user_id, event)
         SELECT nextval('delivery_ids'), $1::bigint + i, 'web', 'Webhooks', gen_random_uuid()::text, 'track',
           '{"type":"track","event":"Order Completed"}', 'user-' || (i % 5000), 'Order Completed'
         FROM generate_series(1, $2::int) AS i`,
        [day, perDay],
      )
    }
    await client.query('ANALYZE messages')
  } finally {
    await client.end()
  }
}

// The message key's index made again with the access method `kind` (the store makes a hash index).
async function useKeyIndex(url, kind) {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    await client.query('DROP INDEX messages_key')
    await client.query(`CREATE INDEX messages_key ON messages USING ${kind} ((md5(message_id)::uuid))`)
  } finally {
    await client.end()
  }
}

// The buffers the enqueue function's statements touched (pg_stat_statements tracks nested ones).
async function enqueueBuffers(url) {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    const { rows } = await client.query(
      `SELECT coalesce(sum(shared_blks_hit), 0)::float8 AS hit, coalesce(sum(shared_blks_read), 0)::float8 AS read
       FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid
       WHERE d.datname = current_database() AND s.toplevel AND s.query LIKE '%tracklet_enqueue(%'`,
    )
    return rows[0]
  } finally {
    await client.end()
  }
}

function batchOf(n) {
  return Array.from({ length: n }, (_, i) => {
    const messageId = randomUUID()
    const message = { type: 'track', messageId, userId: `user-${i % 5000}`, event: 'Order Completed' }
    return { source: 'web', destination: 'Webhooks', messageId, type: 'track', json: JSON.stringify(message) }
  })
}

async function write(store, total) {
  let left = total
  await Promise.all(
    Array.from({ length: WRITERS }, async () => {
      while (left > 0) {
        const n = Math.min(BATCH, left)
        left -= n
        await store.enqueue(batchOf(n))
      }
    }),
  )
}

const server = await startPostgresServer({
  durable: true,
  settings: [
    'shared_preload_libraries=pg_stat_statements',
    ...(args['shared-buffers'] ? [`shared_buffers=${args['shared-buffers']}`] : []),
  ],
})
try {
  const url = await server.createDatabase('bench_enqueue')
  const { openPostgresStore } = await importSource(
    `export { openPostgresStore } from './src/relay/store/postgres/postgres-store'`,
  )
  const store = await openPostgresStore(url, { pool: { max: WRITERS } })
  await useKeyIndex(url, KEY_INDEX)
  await fillDays(url, DAYS, PER_DAY)
  const prototype = DEDUPE === 'keys' ? KEYS_PROTOTYPE : QUEUE_ROW === 'none' ? RANGE_INGEST_PROTOTYPE : undefined
  if (prototype !== undefined) {
    const client = new pg.Client({ connectionString: url })
    await client.connect()
    await client.query(prototype)
    await client.end()
  }
  await write(store, HISTORY)
  await resetStatements(url)
  const measuring = await measureServer(server)
  const started = performance.now()
  await write(store, N)
  const ms = performance.now() - started
  const { cpuMs, walBytes } = await measuring.stop()
  const times = await statementTimes(url)
  const buffers = await enqueueBuffers(url)
  await store.close()
  const per = (x) => ((x * 1000) / N).toFixed(1)
  console.log(
    `enqueue, ${N.toLocaleString('en-US')} messages in batches of ${BATCH}, ${WRITERS} writers, ` +
      `${HISTORY.toLocaleString('en-US')} before, ${DAYS} days of ${PER_DAY.toLocaleString('en-US')} (${KEY_INDEX} key index, dedupe by ${DEDUPE}, queue row: ${QUEUE_ROW}): ${Math.round(N / (ms / 1000)).toLocaleString('en-US')} msgs/s; ` +
      `PostgreSQL ${per(cpuMs)} µs CPU and ${Math.round(walBytes / N).toLocaleString('en-US')} bytes of WAL per message`,
  )
  const listed = times.map((t) => `${t.kind} ${per(t.ms)} µs (${t.calls.toLocaleString('en-US')} calls)`)
  console.log(`  statements' server time per message: ${listed.join('; ')}`)
  console.log(
    `  enqueue's buffers per message: ${(buffers.hit / N).toFixed(1)} hit, ${(buffers.read / N).toFixed(2)} read from outside shared_buffers`,
  )
} finally {
  await server.stop()
}
