// node bench/pg-range-leases.mjs [--messages 30000] [--rounds 2]
//
// Range leases measured before they are built (docs/postgres.md, "Range leases: measured, not
// built" and "Range leases: blocks, not a cursor"): the same work on the store as it is, on range
// leases behind a cursor (./range-ingest-prototype.mjs) and on leased blocks
// (./block-leases-prototype.mjs), both prototype SQL over the store's schema, in turn, each on a
// fresh database of one durable server. Before measuring, each prototype is asked to claim a
// message committed while a transaction in another database of the server stays open: the cursor
// must wait for it (it reads below the snapshot's xmin), a block need not. The work: `messages` with UUID ids enqueued by the store (200 a call, 4 at once, as
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
import { BLOCK_CLAIM, BLOCK_INGEST_PROTOTYPE, BLOCK_RECORD } from './block-leases-prototype.mjs'
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

// Delivery by leased blocks: the prototype's claim and record (a block's count taken down by each
// outcome, the row gone with its last).
async function deliverByBlocks(client) {
  const flying = []
  let delivered = 0
  while (delivered < N) {
    const { rows } = await client.query(BLOCK_CLAIM, ['web', CLAIM, 'bench', 60_000])
    flying.push(...rows)
    const done = flying.splice(0, rows.length === 0 ? flying.length : Math.max(0, flying.length - IN_FLIGHT))
    if (done.length === 0) continue
    await client.query(BLOCK_RECORD, [done.map((d) => d.id), done.map((d) => d.created_at), 'bench'])
    delivered += done.length
  }
  const { rows } = await client.query(
    `SELECT (SELECT count(*)::int FROM delivery_blocks) AS blocks, (SELECT count(DISTINCT delivery_id)::int FROM attempts) AS delivered`,
  )
  if (rows[0].blocks !== 0 || rows[0].delivered !== N)
    throw new Error(`blocks left: ${rows[0].blocks}, delivered ${rows[0].delivered} of ${N}`)
}

const PROTOTYPES = {
  ranges: { schema: RANGE_INGEST_PROTOTYPE + RANGE_DELIVERY_PROTOTYPE, claim: RANGE_CLAIM },
  blocks: { schema: BLOCK_INGEST_PROTOTYPE, claim: BLOCK_CLAIM },
}

// How many of 10 messages, committed while a transaction that wrote in another database of the
// server is still open, the prototype's claim takes: what one open transaction anywhere on the
// server does to its delivery.
async function claimedBesideAnOpenTransaction(layout) {
  const url = await server.createDatabase(`bench_open_${layout}`)
  const elsewhere = new pg.Client({ connectionString: await server.createDatabase(`bench_elsewhere_${layout}`) })
  const store = await openPostgresStore(url, { pool: { max: 1 } })
  const client = new pg.Client({ connectionString: url })
  await Promise.all([client.connect(), elsewhere.connect()])
  try {
    await client.query(PROTOTYPES[layout].schema)
    await elsewhere.query('BEGIN')
    await elsewhere.query('SELECT pg_current_xact_id()')
    await store.enqueue(batchOf(10))
    const { rows } = await client.query(PROTOTYPES[layout].claim, ['web', CLAIM, 'bench', 60_000])
    await elsewhere.query('ROLLBACK')
    return rows.length
  } finally {
    await Promise.all([client.end(), elsewhere.end(), store.close()])
  }
}

const NAMES = {
  queue: 'the store as it is',
  ranges: 'range leases, cursor (prototype)',
  blocks: 'leased blocks (prototype)',
}

const server = await startPostgresServer({ durable: true })
const { openPostgresStore } = await importSource(
  `export { openPostgresStore } from './src/relay/store/postgres/postgres-store'`,
)
const results = { queue: [], ranges: [], blocks: [] }
try {
  for (const layout of ['ranges', 'blocks'])
    console.log(
      `${NAMES[layout]}: claimed ${await claimedBesideAnOpenTransaction(layout)} of 10 messages committed ` +
        'while a transaction in another database stayed open',
    )
  let n = 0
  for (let round = 0; round < ROUNDS; round++) {
    for (const layout of ['queue', 'ranges', 'blocks']) {
      const url = await server.createDatabase(`bench_${layout}_${n++}`)
      const store = await openPostgresStore(url, { pool: { max: WRITERS } })
      const client = new pg.Client({ connectionString: url })
      await client.connect()
      if (layout !== 'queue') await client.query(PROTOTYPES[layout].schema)
      await client.query('CHECKPOINT')
      let measuring = await measureServer(server)
      await ingest(store)
      const ingested = await measuring.stop()
      // Statistics, as autovacuum gathers them on a live server: without them the range claim's
      // planner sorts every message past the cursor (bitmap scans, 21 ms a claim at 20,000 past it)
      // instead of merging each day's index in order (0.5 ms).
      await client.query(`ANALYZE messages${layout === 'blocks' ? ', delivery_blocks' : ''}`)
      measuring = await measureServer(server)
      if (layout === 'queue') await deliverByQueue(store)
      else if (layout === 'ranges') await deliverByRanges(client)
      else await deliverByBlocks(client)
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
        `round ${round + 1}, ${NAMES[layout]}: ` +
          `ingest ${figures.ingestCpu.toFixed(1)} µs CPU, ${Math.round(figures.ingestWal)} B WAL; ` +
          `delivery ${figures.deliveryCpu.toFixed(1)} µs CPU, ${Math.round(figures.deliveryWal)} B WAL; ` +
          `both ${(figures.ingestCpu + figures.deliveryCpu).toFixed(1)} µs, ${Math.round(figures.ingestWal + figures.deliveryWal)} B (a message)`,
      )
    }
  }
  for (const layout of ['ranges', 'blocks']) {
    const ratios = results[layout].map((r, i) => {
      const q = results.queue[i]
      return (r.ingestCpu + r.deliveryCpu) / (q.ingestCpu + q.deliveryCpu)
    })
    console.log(
      `${NAMES[layout]} ÷ the store, server CPU per message, both paths, by round: ${ratios.map((r) => `${r.toFixed(2)}×`).join(', ')}`,
    )
  }
} catch (error) {
  console.error(error)
  process.exitCode = 1
} finally {
  await server.stop()
}
