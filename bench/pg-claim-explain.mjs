// node bench/pg-claim-explain.mjs [--messages 30000] [--claim 100] [--in-flight 500] [--at 50,150]
//
// Delivery's claim on PostgreSQL in a burst, profiled on the server: `messages` enqueued, then
// claims of `claim` deliveries while `in-flight` of them stay leased (as the worker's local queue
// and requests in flight hold them), the oldest recorded delivered as each claim comes back. The
// claims numbered in `at` are shown with their plans, timings, buffers and WAL (EXPLAIN ANALYZE
// of a claim run beside it and rolled back); the server time per statement of the whole run is
// printed at the end, with how many of the queue's row updates stayed on their page (HOT).
// FILLFACTOR=N sets the queue's fillfactor first, to compare the room a page keeps for claims.
import { randomUUID } from 'node:crypto'
import { parseArgs } from 'node:util'
import pg from 'pg'
import { importSource } from './load-source.mjs'
import { resetStatements, statementTimes } from './pg-round-trips.mjs'
import { measureServer } from './pg-server-cost.mjs'
import { recordDelivered } from './pg-delivered.mjs'
import { startPostgresServer } from '../test/support/postgres-server.mjs'

const { values: args } = parseArgs({
  options: {
    messages: { type: 'string', default: '30000' },
    claim: { type: 'string', default: '100' },
    'in-flight': { type: 'string', default: '500' },
    at: { type: 'string', default: '50,150' },
  },
})
const [N, CLAIM, IN_FLIGHT] = [args.messages, args.claim, args['in-flight']].map(Number)
const AT = new Set(args.at.split(',').map(Number))

function batchOf(n) {
  return Array.from({ length: n }, (_, i) => {
    const messageId = randomUUID()
    const message = { type: 'track', messageId, userId: `user-${i % 5000}`, event: 'Order' }
    const json = JSON.stringify(message)
    return { source: 'web', destination: 'Webhooks', messageId, type: 'track', json }
  })
}

const server = await startPostgresServer({
  durable: true,
  settings: ['shared_preload_libraries=pg_stat_statements'],
})
try {
  const url = await server.createDatabase('bench_claim')
  const { openPostgresStore } = await importSource(
    `export { openPostgresStore } from './src/relay/store/postgres/postgres-store'`,
  )
  const store = await openPostgresStore(url, { pool: { max: 1 } })
  if (process.env.FILLFACTOR) {
    const c = new pg.Client({ connectionString: url })
    await c.connect()
    await c.query(`ALTER TABLE queue SET (fillfactor = ${Number(process.env.FILLFACTOR)})`)
    await c.end()
  }
  for (let left = N; left > 0; left -= 200) await store.enqueue(batchOf(Math.min(200, left)))
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  const { POSTGRES_STATEMENTS } = await importSource(
    `export { POSTGRES_STATEMENTS } from './src/relay/store/postgres/statements'`,
  )
  await resetStatements(url)
  const measuring = await measureServer(server)
  const owner = 'bench'
  const flying = []
  let delivered = 0
  for (let n = 1; delivered < N; n++) {
    // The claim about to run, explained in a transaction rolled back: the same state, untouched.
    if (AT.has(n)) {
      await client.query('BEGIN')
      const explain = `EXPLAIN (ANALYZE, BUFFERS, WAL, COSTS OFF) ${POSTGRES_STATEMENTS.claim}`
      const { rows } = await client.query(explain, ['web', null, CLAIM, 'explain', 60_000])
      await client.query('ROLLBACK')
      const plan = rows.map((r) => r['QUERY PLAN']).join('\n')
      console.log(`claim ${n}, ${flying.length} in flight:\n${plan}`)
    }
    const claimed = await store.claim({ source: 'web', limit: CLAIM, owner, leaseMs: 60_000 })
    flying.push(...claimed)
    // Past the in-flight bound the oldest are done; once nothing more comes, all of them.
    const over = Math.max(0, flying.length - IN_FLIGHT)
    const done = flying.splice(0, claimed.length === 0 ? flying.length : over)
    if (done.length > 0) {
      await recordDelivered(store, done)
      delivered += done.length
    }
  }
  const { cpuMs, walBytes } = await measuring.stop()
  const times = await statementTimes(url)
  // Whether the claim's update stayed on its page (HOT: no index entries, a smaller WAL record).
  const { rows: tables } = await client.query(
    `SELECT n_tup_upd AS updates, n_tup_hot_upd AS hot FROM pg_stat_user_tables WHERE relname = 'queue'`,
  )
  await client.end()
  await store.close()
  const per = (x) => ((x * 1000) / N).toFixed(1)
  const wal = Math.round(walBytes / N)
  console.log(`delivery of ${N}: PostgreSQL ${per(cpuMs)} µs CPU, ${wal} bytes of WAL a message`)
  console.log(`  queue updates: ${tables[0].updates}, of them HOT (no index entries): ${tables[0].hot}`)
  console.log(
    `  statements' server time per message: ${times
      .map((t) => `${t.kind} ${per(t.ms)} µs (${t.calls} calls)`)
      .join('; ')}`,
  )
} finally {
  await server.stop()
}
