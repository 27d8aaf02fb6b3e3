// npm run bench:relay — pushes messages SDK → relay (its own process) → outbox → webhook → a
// local receiver, and prints the ingest rate (messages/s acknowledged, i.e. durably written),
// the delivery rate, end-to-end latency, and the relay's peak RSS, beside a baseline measured in
// the same run: the same number of rows inserted into SQLite in batched transactions, with the
// relay's durability settings. Figures are for comparison on one machine, never asserted.
// The baseline runs before and after the relay (a shared disk's fsync time drifts by several
// times within a minute); the ratio is taken against the faster of the two, the harsher test.
//
//   BENCH_MESSAGES=100000 BENCH_FLUSH_AT=100 BENCH_CLIENTS=1 npm run bench:relay
//   (BENCH_CONCURRENCY and BENCH_MAX_IN_FLIGHT_PER_URL set those relay options)
import { fork } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import http from 'node:http'
import { availableParallelism, tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { Analytics } from '../dist/index.js'

const N = Number(process.env.BENCH_MESSAGES ?? 100_000)
const BATCH = 100 // rows per baseline transaction
// The burst's senders: how many SDK clients (each sends up to 4 requests at once), and their flushAt.
const FLUSH_AT = Number(process.env.BENCH_FLUSH_AT ?? 100)
const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 1)
const WRITE_KEY = 'bench-write-key'
const dir = mkdtempSync(join(tmpdir(), 'tracklet-bench-'))

function message(i) {
  return {
    userId: `user-${i % 5000}`,
    event: 'Order Completed',
    properties: { orderId: `o-${i}`, revenue: 9.99, currency: 'EUR', items: ['a', 'b'] },
  }
}

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]
}

const rate = (count, ms) => Math.round(count / (ms / 1000)).toLocaleString('en-US')

// 1. Baseline: N rows of message JSON into SQLite, BATCH rows per transaction, WAL + synchronous FULL.
function baseline() {
  const file = join(dir, 'baseline.db')
  rmSync(file, { force: true })
  const db = new Database(file)
  db.pragma('journal_mode = WAL')
  db.pragma('synchronous = FULL')
  db.exec('CREATE TABLE rows (id INTEGER PRIMARY KEY, message_id TEXT NOT NULL, message TEXT NOT NULL)')
  const insert = db.prepare('INSERT INTO rows (message_id, message) VALUES (?, ?)')
  const insertBatch = db.transaction((rows) => {
    for (const row of rows) insert.run(row.messageId, JSON.stringify(row))
  })
  const started = performance.now()
  for (let i = 0; i < N; i += BATCH) {
    const rows = []
    for (let j = i; j < Math.min(N, i + BATCH); j++)
      rows.push({ type: 'track', messageId: `m-${j}`, timestamp: new Date().toISOString(), ...message(j) })
    insertBatch(rows)
  }
  const ms = performance.now() - started
  db.close()
  return ms
}

// 2. A receiver that answers 200 at once and notes, per phase, when each message arrived.
function startReceiver() {
  let phase
  const server = http.createServer((req, res) => {
    const chunks = []
    req.on('data', (c) => chunks.push(c))
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'))
      res.writeHead(200).end()
      if (phase.seen.has(body.messageId)) return // at-least-once: count each message once
      phase.seen.add(body.messageId)
      phase.lastAt = performance.now()
      phase.latencies.push(Date.now() - Date.parse(body.timestamp))
      if (phase.seen.size === phase.expected) phase.done()
    })
  })
  server.keepAliveTimeout = 30_000
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({
        url: `http://127.0.0.1:${server.address().port}/hook`,
        /** Starts counting a phase of `expected` messages; `all` resolves when each has arrived. */
        expect(expected) {
          phase = { expected, seen: new Set(), latencies: [], lastAt: 0 }
          phase.all = new Promise((done) => (phase.done = done))
          return phase
        },
        close: () => (server.closeAllConnections(), server.close()),
      }),
    ),
  )
}

function startRelay(receiverUrl) {
  const child = fork(
    new URL('./relay-server.mjs', import.meta.url),
    [
      JSON.stringify({
        port: 0,
        database: join(dir, 'relay.db'),
        allowPrivateNetworks: true,
        ...(process.env.BENCH_CONCURRENCY ? { concurrency: Number(process.env.BENCH_CONCURRENCY) } : {}),
        ...(process.env.BENCH_MAX_IN_FLIGHT_PER_URL
          ? { maxInFlightPerUrl: Number(process.env.BENCH_MAX_IN_FLIGHT_PER_URL) }
          : {}),
        sources: [
          { name: 'bench', writeKey: WRITE_KEY, destinations: { Webhooks: { webhooks: [{ url: receiverUrl }] } } },
        ],
      }),
    ],
    { execArgv: process.env.BENCH_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE}`] : [] },
  )
  const next = () => new Promise((resolve) => child.once('message', resolve))
  return next().then(({ url }) => ({ url, stop: () => (child.send('stop'), next()) }))
}

/** Sends `count` track calls through the SDK; resolves when every one is acknowledged. */
async function send(analytics, count, prefix, pace) {
  let settled = 0
  let failed = 0
  let done
  const all = new Promise((resolve) => (done = resolve))
  const settle = (error) => {
    if (error) failed++
    if (++settled === count) done(performance.now())
  }
  for (let i = 0; i < count; i++) {
    analytics.track({ ...message(i), messageId: `${prefix}-${i}` }, settle)
    // Yield now and then so sending overlaps with the calls, as in a live application.
    if (i % pace.every === pace.every - 1)
      await new Promise((resolve) => (pace.ms > 0 ? setTimeout(resolve, pace.ms) : setImmediate(resolve)))
  }
  return { acknowledgedAt: await all, failed }
}

const baselineMs = [baseline()]
const receiver = await startReceiver()
const relay = await startRelay(receiver.url)

// Throughput: N messages as fast as the SDK clients take them, split evenly between them.
const burst = receiver.expect(N)
const started = performance.now()
const sent = await Promise.all(
  Array.from({ length: CLIENTS }, async (_, c) => {
    const count = Math.floor(N / CLIENTS) + (c < N % CLIENTS ? 1 : 0)
    const analytics = new Analytics(WRITE_KEY, { endpoint: relay.url, flushAt: FLUSH_AT, maxQueueSize: count })
    const result = await send(analytics, count, `burst-${c}`, { every: 1000, ms: 0 })
    await analytics.closeAndFlush()
    return result
  }),
)
const acknowledgedAt = Math.max(...sent.map((s) => s.acknowledgedAt))
const failed = sent.reduce((sum, s) => sum + s.failed, 0)
await burst.all
const ingestMs = acknowledgedAt - started
const deliveredMs = burst.lastAt - started

// Latency without a backlog: 2,000 messages at about 1,000 a second, default batching (flushAt 20).
const PACED = 2000
const paced = receiver.expect(PACED)
const steady = new Analytics(WRITE_KEY, { endpoint: relay.url })
await send(steady, PACED, 'paced', { every: 10, ms: 10 })
await steady.closeAndFlush()
await paced.all

const { maxRssBytes, cpuMs } = await relay.stop()
receiver.close()
baselineMs.push(baseline())
rmSync(dir, { recursive: true, force: true })

const burstLatency = burst.latencies.sort((a, b) => a - b)
const pacedLatency = paced.latencies.sort((a, b) => a - b)
const baselineRate = N / (Math.min(...baselineMs) / 1000)
const ingestRate = (N - failed) / (ingestMs / 1000)
const own = process.cpuUsage()
console.log(
  `tracklet relay bench: ${N.toLocaleString('en-US')} messages from ${CLIENTS} SDK client${CLIENTS === 1 ? '' : 's'} (flushAt ${FLUSH_AT}), Node ${process.version}, ${availableParallelism()} CPUs`,
)
console.log(
  `  baseline   SQLite inserts, ${BATCH} rows/transaction (WAL, synchronous=FULL), before/after: ${baselineMs.map((ms) => rate(N, ms)).join(' / ')} rows/s`,
)
console.log(
  `  ingest     SDK → relay, acknowledged after commit: ${rate(N - failed, ingestMs)} msgs/s (${(ingestRate / baselineRate).toFixed(2)}× the faster baseline)${failed ? `, ${failed} failed` : ''}`,
)
console.log(`  delivery   relay → webhook receiver, first call to last delivery: ${rate(N, deliveredMs)} msgs/s`)
console.log(
  `  latency    call → webhook, during the burst (backlog): p50 ${percentile(burstLatency, 50)} ms, p99 ${percentile(burstLatency, 99)} ms`,
)
console.log(
  `  latency    call → webhook, paced ${PACED} at ~1,000/s (one client, flushAt 20): p50 ${percentile(pacedLatency, 50)} ms, p99 ${percentile(pacedLatency, 99)} ms`,
)
console.log(
  `  relay      peak RSS ${(maxRssBytes / 1e6).toFixed(0)} MB, CPU ${(cpuMs / 1000).toFixed(1)} s; this process (SDK + receiver) CPU ${((own.user + own.system) / 1e6).toFixed(1)} s`,
)
