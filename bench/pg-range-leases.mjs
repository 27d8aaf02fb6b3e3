// node bench/pg-range-leases.mjs [--messages 30000] [--rounds 2]
//
// Range leases measured before they are built (docs/postgres.md, "Range leases: measured, not
// built"): the same work on the store as it is and on range leases as prototype SQL over the
// store's schema (./range-ingest-prototype.mjs), A B A B, each on a fresh database of one durable
// server. The work: `messages` with UUID ids enqueued by the store (200 a call, 4 at once, as
// group commit writes them), then delivered by one relay: claims of 100, each delivery recorded
// delivered at its first attempt once 500 more are in flight. Prints the server's CPU and WAL per
// message for each path. The prototype's enqueue is the store's function with no queue row; its
// claim reads past a cursor and writes one lease row per range; its record appends the requests
// and gives up each range once every delivery in it is recorded. What it leaves out (retries,
// parking, the delivery log's status of a message in a range) would add work only to deliveries
// that fail.
import { randomUUID } from 'node:crypto'
import { parseArgs } from 'node:util'
import pg from 'pg'
import { importSource } from './load-source.mjs'
import { measureServer } from './pg-server-cost.mjs'
import { recordDelivered } from './pg-delivered.mjs'
import { startPostgresServer } from '../test/support/postgres-server.mjs'
import {
  RANGE_CLAIM,
  RANGE_DELIVERY_PROTOTYPE,
  RANGE_INGEST_PROTOTYPE,
  RANGE_RECORD,
} from './range-ingest-prototype.mjs'

const { values: args } = parseArgs({
  options: { messages: { type: 'string', default: '30000' }, rounds: { type: 'string', default: '2' } },
})
const [N, ROUNDS] = [args.messages, args.rounds].map(Number)
const CLAIM = 100
const IN_FLIGHT = 500
const WRITERS = 4

function batchOf(n) {
  return Array.from({ length: n }, (_, i) => {
    const messageId = randomUUID()
    const json = JSON.stringify({ type: 'track', messageId, userId: `user-${i % 5000}`, event: 'Order' })
    return { source: 'web', destination: 'Webhooks', messageId, type: 'track', json }
  })
}

// Ingest: N messages through the store's enqueue, WRITERS calls of 200 at once.
async function ingest(store) {
  let left = N
  await Promise.all(
    Array.from({ length: WRITERS }, async () => {
      while (left > 0) {
        const n = Math.min(200, left)
        left -= n
        await store.enqueue(batchOf(n))
      }
    }),
  )
}

// Delivery on the store as it is: its claim and record.
async function deliverByQueue(store) {
  const flying = []
  let delivered = 0
  while (delivered < N) {
    const claimed = await store.claim({ source: 'web', limit: CLAIM, owner: 'bench', leaseMs: 60_000 })
    flying.push(...claimed)
    const done = flying.splice(0, claimed.length === 0 ? flying.length : Math.max(0, flying.length - IN_FLIGHT))
    if (done.length === 0) continue
    await recordDelivered(store, done)
    delivered += done.length
  }
}

// Delivery by range leases: the prototype's claim and record, a range given up with its last delivery.
async function deliverByRanges(client) {
  const flying = []
  let delivered = 0
  while (delivered < N) {
    const { rows } = await client.query(RANGE_CLAIM, ['web', CLAIM, 'bench', 60_000])
    for (const [i, row] of rows.entries()) flying.push({ ...row, last: i === rows.length - 1 })
    const done = flying.splice(0, rows.length === 0 ? flying.length : Math.max(0, flying.length - IN_FLIGHT))
    if (done.length === 0) continue
    const ended = done.filter((d) => d.last)
    await client.query(RANGE_RECORD, [
      done.map((d) => d.id),
      done.map((d) => d.created_at),
      ended.map((d) => d.first_xid),
      ended.map((d) => d.first_id),
    ])
    delivered += done.length
  }
  const { rows } = await client.query(
    `SELECT (SELECT count(*)::int FROM range_leases) AS leases, (SELECT count(DISTINCT delivery_id)::int FROM attempts) AS delivered`,
  )
  if (rows[0].leases !== 0 || rows[0].delivered !== N)
    throw new Error(`ranges left: ${rows[0].leases}, delivered ${rows[0].delivered} of ${N}`)
}

const server = await startPostgresServer({ durable: true })
const { openPostgresStore } = await importSource(
  `export { openPostgresStore } from './src/relay/store/postgres/postgres-store'`,
)
const results = { queue: [], ranges: [] }
try {
  let n = 0
  for (let round = 0; round < ROUNDS; round++) {
    for (const layout of ['queue', 'ranges']) {
      const url = await server.createDatabase(`bench_${layout}_${n++}`)
      const store = await openPostgresStore(url, { pool: { max: WRITERS } })
      const client = new pg.Client({ connectionString: url })
      await client.connect()
      if (layout === 'ranges') await client.query(RANGE_INGEST_PROTOTYPE + RANGE_DELIVERY_PROTOTYPE)
      await client.query('CHECKPOINT')
      let measuring = await measureServer(server)
      await ingest(store)
      const ingested = await measuring.stop()
      // Statistics, as autovacuum gathers them on a live server: without them the range claim's
      // planner sorts every message past the cursor (bitmap scans, 21 ms a claim at 20,000 past it)
      // instead of merging each day's index in order (0.5 ms).
      await client.query('ANALYZE messages')
      measuring = await measureServer(server)
      if (layout === 'queue') await deliverByQueue(store)
      else await deliverByRanges(client)
      const deliveredCost = await measuring.stop()
      await client.end()
      await store.close()
      const per = (x) => (x * 1000) / N
      const figures = {
        ingestCpu: per(ingested.cpuMs),
        ingestWal: ingested.walBytes / N,
        deliveryCpu: per(deliveredCost.cpuMs),
        deliveryWal: deliveredCost.walBytes / N,
      }
      results[layout].push(figures)
      console.log(
        `round ${round + 1}, ${layout === 'queue' ? 'the store as it is' : 'range leases (prototype)'}: ` +
          `ingest ${figures.ingestCpu.toFixed(1)} µs CPU, ${Math.round(figures.ingestWal)} B WAL; ` +
          `delivery ${figures.deliveryCpu.toFixed(1)} µs CPU, ${Math.round(figures.deliveryWal)} B WAL; ` +
          `both ${(figures.ingestCpu + figures.deliveryCpu).toFixed(1)} µs, ${Math.round(figures.ingestWal + figures.deliveryWal)} B (a message)`,
      )
    }
  }
  const ratios = results.ranges.map((r, i) => {
    const q = results.queue[i]
    return (r.ingestCpu + r.deliveryCpu) / (q.ingestCpu + q.deliveryCpu)
  })
  console.log(
    `range leases ÷ the store, server CPU per message, both paths, by round: ${ratios.map((r) => `${r.toFixed(2)}×`).join(', ')}`,
  )
} catch (error) {
  console.error(error)
  process.exitCode = 1
} finally {
  await server.stop()
}
