// node bench/pg-enqueue.mjs [--messages 30000] [--batch 200] [--writers 4] [--history 0]
//
// Ingest's write alone on PostgreSQL: the store's enqueue (what group commit calls), `writers`
// at once, batches of `batch` messages with UUID ids as the SDK makes them, on a durable server.
// Prints msgs/s, the server's CPU and WAL per message, and the statements' server time per
// message (pg_stat_statements). `--history N` first writes N messages (not measured), so the
// duplicate check looks into a filled partition. For A/B runs of two builds of the store: whole
// process figures from outside, the printed ones from within.
import { randomUUID } from 'node:crypto'
import { parseArgs } from 'node:util'
import { importSource } from './load-source.mjs'
import { measureServer } from './pg-server-cost.mjs'
import { resetStatements, statementTimes } from './pg-round-trips.mjs'
import { startPostgresServer } from '../test/support/postgres-server.mjs'

const { values: args } = parseArgs({
  options: {
    messages: { type: 'string', default: '30000' },
    batch: { type: 'string', default: '200' },
    writers: { type: 'string', default: '4' },
    history: { type: 'string', default: '0' },
  },
})
const [N, BATCH, WRITERS, HISTORY] = [args.messages, args.batch, args.writers, args.history].map(Number)

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
  settings: ['shared_preload_libraries=pg_stat_statements'],
})
try {
  const url = await server.createDatabase('bench_enqueue')
  const { openPostgresStore } = await importSource(
    `export { openPostgresStore } from './src/relay/store/postgres/postgres-store'`,
  )
  const store = await openPostgresStore(url, { pool: { max: WRITERS } })
  await write(store, HISTORY)
  await resetStatements(url)
  const measuring = await measureServer(server)
  const started = performance.now()
  await write(store, N)
  const ms = performance.now() - started
  const { cpuMs, walBytes } = await measuring.stop()
  const times = await statementTimes(url)
  await store.close()
  const per = (x) => ((x * 1000) / N).toFixed(1)
  console.log(
    `enqueue, ${N.toLocaleString('en-US')} messages in batches of ${BATCH}, ${WRITERS} writers, ` +
      `${HISTORY.toLocaleString('en-US')} before: ${Math.round(N / (ms / 1000)).toLocaleString('en-US')} msgs/s; ` +
      `PostgreSQL ${per(cpuMs)} µs CPU and ${Math.round(walBytes / N).toLocaleString('en-US')} bytes of WAL per message`,
  )
  const listed = times.map((t) => `${t.kind} ${per(t.ms)} µs (${t.calls.toLocaleString('en-US')} calls)`)
  console.log(`  statements' server time per message: ${listed.join('; ')}`)
} finally {
  await server.stop()
}
