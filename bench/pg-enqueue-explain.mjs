// node bench/pg-enqueue-explain.mjs [--history 30000] [--batch 200] [--days 0] [--runs 3]
//
// One batch of ingest's enqueue on PostgreSQL, profiled on the server: every statement the
// enqueue function runs, with its plan, timings, buffers and WAL (auto_explain, nested statements,
// sent back to this client as notices), after `history` messages (and `days` filled day partitions
// of 30,000, as bench/pg-enqueue.mjs --days) so that the duplicate check reads filled indexes.
import { randomUUID } from 'node:crypto'
import { parseArgs } from 'node:util'
import pg from 'pg'
import { importSource } from './load-source.mjs'
import { startPostgresServer } from '../test/support/postgres-server.mjs'

const { values: args } = parseArgs({
  options: {
    history: { type: 'string', default: '30000' },
    batch: { type: 'string', default: '200' },
    days: { type: 'string', default: '0' },
    runs: { type: 'string', default: '3' },
  },
})
const [HISTORY, BATCH, DAYS, RUNS] = [args.history, args.batch, args.days, args.runs].map(Number)
const DAY_MS = 86_400_000

function batchOf(n) {
  return Array.from({ length: n }, (_, i) => {
    const messageId = randomUUID()
    const message = { type: 'track', messageId, userId: `user-${i % 5000}`, event: 'Order' }
    const json = JSON.stringify(message)
    return { source: 'web', destination: 'Webhooks', messageId, type: 'track', json }
  })
}

const server = await startPostgresServer({ durable: true })
try {
  const url = await server.createDatabase('bench_explain')
  const { openPostgresStore } = await importSource(
    `export { openPostgresStore } from './src/relay/store/postgres/postgres-store'`,
  )
  const store = await openPostgresStore(url, { pool: { max: 2 } })
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  const today = Math.floor(Date.now() / DAY_MS) * DAY_MS
  for (let d = 1; d <= DAYS; d++) {
    const day = today - d * DAY_MS
    const name = `messages_${new Date(day).toISOString().slice(0, 10).replaceAll('-', '_')}`
    const range = `FROM (${day}) TO (${day + DAY_MS})`
    await client.query(`CREATE TABLE ${name} PARTITION OF messages FOR VALUES ${range}`)
    await client.query(
      `INSERT INTO messages (
         id, created_at, source, destination, message_id, type, message, user_id, event)
       SELECT nextval('delivery_ids'), $1::bigint + i, 'web', 'Webhooks',
         gen_random_uuid()::text, 'track', '{"type":"track"}', 'user-' || (i % 5000), 'Order'
       FROM generate_series(1, 30000) AS i`,
      [day],
    )
  }
  for (let left = HISTORY; left > 0; left -= BATCH) {
    await store.enqueue(batchOf(Math.min(BATCH, left)))
  }
  await client.query('VACUUM ANALYZE')
  // A warm batch first (plans cached, pages read), then the profiled one.
  await store.enqueue(batchOf(BATCH))
  const notices = []
  client.on('notice', (n) => notices.push(n.message))
  for (const sql of [
    "LOAD 'auto_explain'",
    'SET auto_explain.log_min_duration = 0',
    'SET auto_explain.log_analyze = on',
    'SET auto_explain.log_buffers = on',
    'SET auto_explain.log_wal = on',
    'SET auto_explain.log_nested_statements = on',
    'SET auto_explain.log_level = notice',
  ]) {
    await client.query(sql)
  }
  const { POSTGRES_STATEMENTS } = await importSource(
    `export { POSTGRES_STATEMENTS } from './src/relay/store/postgres/statements'`,
  )
  for (let run = 0; run < RUNS; run++) {
    const rows = batchOf(BATCH)
    const col = (f) => rows.map(f)
    await client.query('BEGIN')
    await client.query(POSTGRES_STATEMENTS.enqueue, [
      col((r) => r.source),
      col((r) => r.destination),
      col((r) => r.messageId),
      col((r) => r.type),
      col((r) => r.json),
      col((_, i) => `user-${i}`),
      col(() => 'Order Completed'),
      null,
    ])
    await client.query('COMMIT')
  }
  // The call's own notice repeats its parameters (the whole batch): its plan lines only.
  const plain = notices.map((n) => n.replace(/^Query Parameters: .*$/m, ''))
  console.log(plain.join('\n\n'))
  await client.end()
  await store.close()
} finally {
  await server.stop()
}
