// npm run bench:relay — pushes messages SDK → relay (each in its own process) → outbox → webhook
// → a local receiver, and prints, beside baselines measured in the same run:
//   - each path alone: ingest only (the webhook never answers, so delivery holds back after its
//     first requests) against the raw insert baseline; then delivery only (a relay started on that
//     filled outbox) against the raw delivery baseline; for each, msgs/s and relay CPU µs per
//     message, and on PostgreSQL the server's CPU and WAL bytes per message;
//   - both at once (the burst below):
//   - ingest (messages/s acknowledged, i.e. durably written) against the store's raw insert
//     baseline (batched inserts into the same kind of database, with the relay's durability);
//   - delivery (messages/s reaching the receiver) against the raw delivery baseline (the same
//     webhook bodies signed and POSTed with undici keep-alive, 32 in flight, to the same receiver);
//   - relay CPU per delivered message (ingest included), peak RSS, burst and paced latency;
//   - on PostgreSQL, round trips per delivered message (pg_stat_statements), and one relay
//     against two (or more) on the same database;
//   - on PostgreSQL, the peer: a relay built on graphile-worker (bench/graphile-relay.mjs) given the
//     same burst, client and receiver on its own database of the same server, and Tracklet's ratio
//     to it (ingest, delivery, server CPU and WAL per message).
// Insert baselines run before and after the relays (a shared disk's fsync time drifts); ratios
// are taken against the faster, the harsher test. Figures compare variants on one machine; they
// are never asserted.
//
//   npm run bench:relay -- --store postgres --relays 1,2
//   npm run bench:relay -- --store sqlite --workers 1,2   (only `tracklet relay --workers N`, each
//     N on a fresh store: both paths at once, msgs/s and CPU per message of the primary and its
//     workers together, from /proc; on PostgreSQL the server's CPU and WAL per message too)
//   BENCH_MESSAGES=100000 BENCH_FLUSH_AT=100 npm run bench:relay
//   BENCH_IDS=random npm run bench:relay                  (UUID message ids, as the SDK makes them)
//   BENCH_PROFILE=.tmp/profiles npm run bench:relay      (a --cpu-prof per relay process)
//   BENCH_WAL_DETAIL=1 npm run bench:relay -- --store postgres   (each phase's WAL by relation and
//     kind of record, read back with pg_walinspect: bench/pg-wal-breakdown.mjs)
//   (BENCH_CLIENTS, BENCH_CONCURRENCY and BENCH_MAX_IN_FLIGHT_PER_URL set those relay options)
//   BENCH_RECEIVER=thread   (the webhook receiver in the bench's own thread: bench/receiver.mjs)
import { fork } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import http from 'node:http'
import { availableParallelism, tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { Analytics } from '../dist/index.js'
import { startPostgresServer } from '../test/support/postgres-server.mjs'
import { deliveryBaseline } from './delivery-baseline.mjs'
import { measureServer } from './pg-server-cost.mjs'
import { postBatches } from './post-batches.mjs'
import { startReceiver, startReceiverProcess } from './receiver.mjs'
import { printWalBreakdown, startWalBreakdown } from './pg-wal-breakdown.mjs'
import { startWorkersRelay } from './relay-workers.mjs'
import { countStatements, DELIVERY_KINDS, resetStatements, statementTimes } from './pg-round-trips.mjs'
import { postgresInsertBaseline, sqliteInsertBaseline } from './store-baselines.mjs'

const { values: args } = parseArgs({
  options: { store: { type: 'string', default: 'sqlite' }, relays: { type: 'string' }, workers: { type: 'string' } },
})
const WORKER_COUNTS = args.workers?.split(',').map(Number)
if (WORKER_COUNTS?.some((k) => !Number.isInteger(k) || k < 1)) throw new Error('--workers is a list such as 1,2')
const STORE = args.store
if (STORE !== 'sqlite' && STORE !== 'postgres') throw new Error('--store is sqlite or postgres')
const RELAY_COUNTS = (args.relays ?? (STORE === 'postgres' ? '1,2' : '1')).split(',').map(Number)
if (STORE === 'sqlite' && RELAY_COUNTS.some((k) => k !== 1)) throw new Error('a SQLite file serves one relay')

const N = Number(process.env.BENCH_MESSAGES ?? 50_000)
const BATCH = 100 // rows per baseline transaction
const FLUSH_AT = Number(process.env.BENCH_FLUSH_AT ?? 100)
const IN_FLIGHT = 32 // the raw delivery baseline's requests in flight: the relay's default concurrency
const WRITE_KEY = 'bench-write-key'
const SECRET = 'bench-shared-secret'
const dir = mkdtempSync(join(tmpdir(), 'tracklet-bench-'))

function message(i) {
  return {
    userId: `user-${i % 5000}`,
    event: 'Order Completed',
    properties: { orderId: `o-${i}`, revenue: 9.99, currency: 'EUR', items: ['a', 'b'] },
  }
}

// Message ids: `<phase>-<n>` by default (ordered, as earlier figures were taken), or with
// BENCH_IDS=random a random UUID each, as the SDK makes them: the duplicate check's unique index
// then takes each insert at a random place in it, which costs the store more.
const RANDOM_IDS = process.env.BENCH_IDS === 'random'
if (!RANDOM_IDS && (process.env.BENCH_IDS ?? 'ordered') !== 'ordered') throw new Error('BENCH_IDS is ordered or random')
const messageId = (prefix, n) => (RANDOM_IDS ? randomUUID() : `${prefix}-${n}`)

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]
}

const rate = (count, ms) => Math.round(count / (ms / 1000))
const fmt = (n) => n.toLocaleString('en-US')

// A receiver that takes requests and never answers: the relay's requests in flight stay so, and
// with them its delivery (a timeout far off keeps them from failing meanwhile).
function startHoldingReceiver() {
  const held = []
  const server = http.createServer((req, res) => {
    req.resume()
    held.push(res)
  })
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({
        url: `http://127.0.0.1:${server.address().port}/hold`,
        close: () => {
          server.closeAllConnections()
          server.close()
        },
      }),
    ),
  )
}

/** The options of every relay of the bench. */
function relayOptions(receiverUrl, database, extra = {}) {
  return {
    port: 0,
    database,
    allowPrivateNetworks: true,
    ...extra,
    ...(process.env.BENCH_CONCURRENCY ? { concurrency: Number(process.env.BENCH_CONCURRENCY) } : {}),
    ...(process.env.BENCH_MAX_IN_FLIGHT_PER_URL
      ? { maxInFlightPerUrl: Number(process.env.BENCH_MAX_IN_FLIGHT_PER_URL) }
      : {}),
    sources: [
      {
        name: 'bench',
        writeKey: WRITE_KEY,
        destinations: { Webhooks: { webhooks: [{ url: receiverUrl }], sharedSecret: SECRET } },
      },
    ],
  }
}

// `graphile`: start the graphile-worker relay (bench/graphile-relay.mjs) instead of Tracklet's.
function startRelay(receiverUrl, database, index, extra = {}, graphile = false) {
  const child = fork(
    new URL(graphile ? './graphile-relay.mjs' : './relay-server.mjs', import.meta.url),
    [
      JSON.stringify(
        graphile
          ? { database, receiverUrl, writeKey: WRITE_KEY, secret: SECRET, concurrency: IN_FLIGHT }
          : relayOptions(receiverUrl, database, extra),
      ),
    ],
    {
      execArgv: process.env.BENCH_PROFILE
        ? [
            '--cpu-prof',
            `--cpu-prof-dir=${process.env.BENCH_PROFILE}`,
            `--cpu-prof-name=relay-${STORE}-${index}.cpuprofile`,
          ]
        : [],
    },
  )
  const next = () => new Promise((resolve) => child.once('message', resolve))
  return next().then(({ url }) => ({
    url,
    /** CPU ms the relay process has used so far. */
    usage: () => {
      child.send('usage')
      return next().then(({ cpuMs }) => cpuMs)
    },
    kill: () => new Promise((resolve) => child.once('exit', resolve).kill('SIGKILL')),
    stop: () => {
      child.send('stop')
      return next()
    },
  }))
}

// Requests in flight at once in the ingest-only phase: enough to keep one relay busy.
const INGEST_IN_FLIGHT = 8

/** N messages as batch bodies, built and serialised beforehand: the load is the relay's, not a client's. */
function batchBodies(prefix) {
  const bodies = []
  for (let i = 0; i < N; i += FLUSH_AT) {
    const batch = []
    for (let j = i; j < Math.min(N, i + FLUSH_AT); j++) {
      batch.push({ type: 'track', messageId: messageId(prefix, j), timestamp: new Date().toISOString(), ...message(j) })
    }
    bodies.push(JSON.stringify({ batch, sentAt: new Date().toISOString() }))
  }
  return bodies
}

/** POSTs the bodies (./post-batches.mjs); resolves with the messages refused. */
async function postMessages(url, bodies, inFlight, perSecond) {
  return FLUSH_AT * (await postBatches(url, bodies, { writeKey: WRITE_KEY, inFlight, perSecond }))
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
    analytics.track({ ...message(i), messageId: messageId(prefix, i) }, settle)
    // Yield now and then so sending overlaps with the calls, as in a live application.
    if (i % pace.every === pace.every - 1)
      await new Promise((resolve) => (pace.ms > 0 ? setTimeout(resolve, pace.ms) : setImmediate(resolve)))
  }
  return { acknowledgedAt: await all, failed }
}

// The store: a SQLite file, or a database on a PostgreSQL server started for this run with its
// default durability (and pg_stat_statements, to count the relay's round trips).
const server =
  STORE === 'postgres'
    ? await startPostgresServer({
        durable: true,
        settings: ['shared_preload_libraries=pg_stat_statements', 'max_connections=200'],
      })
    : undefined
let databases = 0
const newDatabase = async () =>
  server ? server.createDatabase(`bench_${databases++}`) : join(dir, `relay-${databases++}.db`)
const baselineDatabase = server ? await server.createDatabase('baseline') : undefined

// BENCH_WAL_DETAIL=1 (PostgreSQL): where each phase's WAL goes, by relation and kind of record.
const walDetails = []
async function walDetail(title, database, count = N) {
  if (!server || !process.env.BENCH_WAL_DETAIL) return { stop: async () => {} }
  const breakdown = await startWalBreakdown(server, database)
  return { stop: async () => walDetails.push([title, await breakdown.stop(), count]) }
}

async function insertBaselines() {
  if (STORE === 'sqlite') return { one: sqliteInsertBaseline(dir, N, BATCH, message) }
  return {
    one: await postgresInsertBaseline(baselineDatabase, N, BATCH, message, 1),
    four: await postgresInsertBaseline(baselineDatabase, N, BATCH, message, 4),
  }
}

const insertsBefore = await insertBaselines()
const receiver = process.env.BENCH_RECEIVER === 'thread' ? await startReceiver() : await startReceiverProcess()

// The raw delivery baseline, to the same receiver, with the stored messages' shape.
const rawPhase = receiver.expect(N)
const raw = await deliveryBaseline(
  receiver.url,
  Array.from({ length: N }, (_, i) => ({
    type: 'track',
    messageId: `raw-${i}`,
    timestamp: new Date().toISOString(),
    context: { library: { name: 'tracklet', version: '0.1.0' } },
    ...message(i),
  })),
  SECRET,
  IN_FLIGHT,
)
await rawPhase.all

// Each path alone, on one relay and a fresh store. Ingest only: the webhook never answers, so the
// relay's first requests stay in flight and nothing else is delivered. Then delivery only: that
// relay is killed and another started on the filled outbox.
async function measurePathsAlone() {
  const database = await newDatabase()
  const holding = await startHoldingReceiver()
  // A short lease, so that on PostgreSQL the killed relay's few leased deliveries are free soon.
  const LEASE_MS = 2000
  const ingesting = await startRelay(holding.url, database, 'ingest-only', {
    webhookTimeout: 600_000,
    leaseTimeout: LEASE_MS,
  })
  const serverIngest = server ? await measureServer(server) : undefined
  const walIngest = await walDetail('ingest only', database)
  const bodies = batchBodies('alone')
  const cpuBefore = await ingesting.usage()
  const started = performance.now()
  const failed = await postMessages(`${ingesting.url}/v1/batch`, bodies, INGEST_IN_FLIGHT)
  const ingest = {
    ms: performance.now() - started,
    failed,
    cpuUs: ((await ingesting.usage()) - cpuBefore) * 1000,
    server: await serverIngest?.stop(),
  }
  await walIngest.stop()
  await ingesting.kill()
  holding.close()
  if (server) await new Promise((resolve) => setTimeout(resolve, LEASE_MS + 200))

  const phase = receiver.expect(N)
  const delivering = await startRelay(receiver.url, database, 'delivery-only')
  const serverDelivery = server ? await measureServer(server) : undefined
  const walDelivery = await walDetail('delivery only', database)
  const deliveryCpuBefore = await delivering.usage()
  const deliveryStarted = performance.now()
  await phase.all
  const delivery = {
    ms: phase.lastAt - deliveryStarted,
    cpuUs: ((await delivering.usage()) - deliveryCpuBefore) * 1000,
    server: await serverDelivery?.stop(),
  }
  await walDelivery.stop()
  await delivering.stop()
  return { ingest, delivery }
}
// The paced phase of the workers bench: this many messages at this rate (messages a second).
const WORKERS_PACED = Number(process.env.BENCH_WORKERS_PACED ?? 10_000)
const WORKERS_RATE = Number(process.env.BENCH_WORKERS_RATE ?? 2_000)

// `tracklet relay --workers N`, both paths at once: N messages POSTed on a few connections (the
// primary hands each connection to one worker in turn), until the last one is delivered.
async function measureWorkers(counts) {
  const cliPath = fileURLToPath(new URL('../dist/cli.js', import.meta.url))
  const bodies = batchBodies('workers')
  const results = []
  for (const k of counts) {
    const database = await newDatabase()
    const options = relayOptions(receiver.url, database)
    const relay = await startWorkersRelay(cliPath, join(dir, `workers-${k}.json`), options, k)
    const serverCost = server ? await measureServer(server) : undefined
    const phase = receiver.expect(N)
    const before = relay.usage()
    const started = performance.now()
    const failed = await postMessages(`${relay.url}/v1/batch`, bodies, INGEST_IN_FLIGHT)
    const acknowledgedAt = performance.now()
    await phase.all
    const after = relay.usage()
    const serverBurst = await serverCost?.stop()

    // Then a steady load well below what one relay takes (no core is short): what each message
    // costs when the workers do not compete with each other and the rest for the cores.
    const pacedBodies = batchBodies('workers-paced').slice(0, Math.ceil(WORKERS_PACED / FLUSH_AT))
    const pacedPhase = receiver.expect(pacedBodies.length * FLUSH_AT)
    if (server) await resetStatements(database)
    const serverPaced = server ? await measureServer(server) : undefined
    const pacedBefore = relay.usage()
    const pacedFailed = await postMessages(`${relay.url}/v1/batch`, pacedBodies, 4, WORKERS_RATE / FLUSH_AT)
    await pacedPhase.all
    const pacedAfter = relay.usage()
    results.push({
      k,
      paced: {
        messages: pacedBodies.length * FLUSH_AT,
        failed: pacedFailed,
        cpuUsPerMessage: ((pacedAfter.cpuMs - pacedBefore.cpuMs) * 1000) / (pacedBodies.length * FLUSH_AT),
        readsPerMessage: (pacedAfter.reads - pacedBefore.reads) / (pacedBodies.length * FLUSH_AT),
        server: await serverPaced?.stop(),
        statements: server ? await countStatements(database) : undefined,
      },
      ingestMs: acknowledgedAt - started,
      deliveredMs: phase.lastAt - started,
      failed,
      cpuUsPerMessage: ((after.cpuMs - before.cpuMs) * 1000) / N,
      primaryCpuUsPerMessage: ((after.primaryCpuMs - before.primaryCpuMs) * 1000) / N,
      processes: after.processes,
      server: serverBurst,
    })
    await relay.stop()
  }
  return results
}

const alone = WORKER_COUNTS ? undefined : await measurePathsAlone()
const workerRuns = WORKER_COUNTS ? await measureWorkers(WORKER_COUNTS) : []

const runs = []
// On PostgreSQL, a relay built on graphile-worker (bench/graphile-relay.mjs) takes the same burst
// on its own database of the same server, after Tracklet's 1-relay run: the peer ratio.
const PEER = server ? ['graphile'] : []
for (const k of WORKER_COUNTS ? [] : [...RELAY_COUNTS, ...PEER]) {
  const graphile = k === 'graphile'
  const database = await newDatabase()
  const relays = graphile
    ? [await startRelay(receiver.url, database, 'graphile', {}, true)]
    : await Promise.all(Array.from({ length: k }, (_, i) => startRelay(receiver.url, database, i)))
  if (server) await resetStatements(database)
  const serverBoth = server ? await measureServer(server) : undefined
  const walBoth = await walDetail(
    graphile
      ? 'both paths, graphile-worker relay (the burst)'
      : `both paths, ${k} relay${k === 1 ? '' : 's'} (the burst)`,
    database,
  )

  // Throughput: N messages as fast as one SDK client per relay takes them, split evenly.
  const burst = receiver.expect(N)
  const started = performance.now()
  const sent = await Promise.all(
    relays.map(async (relay, c) => {
      const count = Math.floor(N / relays.length) + (c < N % relays.length ? 1 : 0)
      const analytics = new Analytics(WRITE_KEY, { endpoint: relay.url, flushAt: FLUSH_AT, maxQueueSize: count })
      const result = await send(analytics, count, `burst-${k}-${c}`, { every: 1000, ms: 0 })
      await analytics.closeAndFlush()
      return result
    }),
  )
  const acknowledgedAt = Math.max(...sent.map((s) => s.acknowledgedAt))
  const failed = sent.reduce((sum, s) => sum + s.failed, 0)
  await burst.all
  const statements = server && !graphile ? await countStatements(database) : undefined
  const times = server ? await statementTimes(database) : undefined
  const serverCost = await serverBoth?.stop()
  await walBoth.stop()

  // Latency without a backlog: 2,000 messages at about 1,000 a second, default batching (flushAt 20).
  const PACED = 2000
  const paced = receiver.expect(PACED)
  const steady = new Analytics(WRITE_KEY, { endpoint: relays[0].url })
  await send(steady, PACED, `paced-${k}`, { every: 10, ms: 10 })
  await steady.closeAndFlush()
  await paced.all

  const stopped = await Promise.all(relays.map((relay) => relay.stop()))
  runs.push({
    k,
    ingestMs: acknowledgedAt - started,
    deliveredMs: burst.lastAt - started,
    failed,
    burstLatency: burst.latencies.sort((a, b) => a - b),
    pacedLatency: paced.latencies.sort((a, b) => a - b),
    // CPU over the burst and the paced phase: per message of both.
    cpuUsPerMessage: (stopped.reduce((sum, s) => sum + s.cpuMs, 0) * 1000) / (N + PACED),
    peakRss: stopped.map((s) => s.maxRssBytes),
    statements,
    times,
    serverCost,
  })
}
receiver.close()
const insertsAfter = await insertBaselines()
await server?.stop()
rmSync(dir, { recursive: true, force: true })

const bestInsertMs = Math.min(...Object.values(insertsBefore), ...Object.values(insertsAfter))
const insertRate = N / (bestInsertMs / 1000)
const rawRate = rate(N, raw.ms)
console.log(
  `tracklet relay bench: ${STORE} store, ${fmt(N)} messages (${RANDOM_IDS ? 'random' : 'ordered'} ids), SDK flushAt ${FLUSH_AT}, Node ${process.version}, ${availableParallelism()} CPUs`,
)
const describeInserts = (b) =>
  Object.entries(b)
    .map(([conns, ms]) => `${fmt(rate(N, ms))}${STORE === 'postgres' ? ` (${conns === 'one' ? '1' : '4'} conn)` : ''}`)
    .join(', ')
console.log(
  `  baseline   ${STORE === 'sqlite' ? 'SQLite inserts, 100 rows/transaction (WAL, synchronous=FULL)' : 'PostgreSQL 100-row INSERTs (synchronous_commit on)'}, before / after: ${describeInserts(insertsBefore)} / ${describeInserts(insertsAfter)} rows/s`,
)
console.log(
  `  baseline   raw delivery, signed POSTs with undici keep-alive, ${IN_FLIGHT} in flight: ${fmt(rawRate)} msgs/s, ${Math.round(raw.cpuUs / N)} µs CPU each`,
)
const perMessage = (cost, count = N) =>
  cost === undefined
    ? ''
    : `; PostgreSQL ${Math.round((cost.cpuMs * 1000) / count)} µs CPU and ${fmt(Math.round(cost.walBytes / count))} bytes of WAL per message`
const rawCpuUs = raw.cpuUs / N
function roundTrips(statements, count) {
  const delivering = DELIVERY_KINDS.reduce((sum, kind) => sum + statements[kind], 0)
  return `round trips per delivered message: ${(delivering / count).toFixed(4)} (${DELIVERY_KINDS.map((kind) => `${kind} ${statements[kind]}`).join(', ')}); ingest ${(statements.enqueue / count).toFixed(4)} per message`
}
if (alone) {
  console.log('  each path alone, 1 relay:')
  const ingestRate = (N - alone.ingest.failed) / (alone.ingest.ms / 1000)
  console.log(
    `    ingest only   ${fmt(Math.round(ingestRate))} msgs/s (${(ingestRate / insertRate).toFixed(2)}× the faster insert baseline; aim ≥ 0.5×), relay ${Math.round(alone.ingest.cpuUs / N)} µs CPU per message${perMessage(alone.ingest.server)}${alone.ingest.failed ? `, ${alone.ingest.failed} failed` : ''}`,
  )
  const deliveryRate = N / (alone.delivery.ms / 1000)
  console.log(
    `    delivery only ${fmt(Math.round(deliveryRate))} msgs/s (${(deliveryRate / rawRate).toFixed(2)}× raw delivery; aim ≥ 0.8×), relay ${Math.round(alone.delivery.cpuUs / N)} µs CPU per message (${(alone.delivery.cpuUs / N / rawCpuUs).toFixed(2)}× the raw sender's)${perMessage(alone.delivery.server)}`,
  )
  const total = (alone.ingest.cpuUs + alone.delivery.cpuUs) / N
  console.log(
    `    both paths    relay ${Math.round(total)} µs CPU per delivered message, ingest included (${(total / rawCpuUs).toFixed(2)}× the raw sender's ${Math.round(rawCpuUs)} µs per POST; aim ≤ 1.0×)`,
  )
}
for (const run of workerRuns) {
  const ingestRate = (N - run.failed) / (run.ingestMs / 1000)
  const deliveryRate = rate(N, run.deliveredMs)
  const first = workerRuns[0]
  console.log(
    `  tracklet relay --workers ${run.k} (${run.processes} processes: the primary and its workers), both paths at once:`,
  )
  console.log(
    `    ingest     ${INGEST_IN_FLIGHT} connections, acknowledged after commit: ${fmt(Math.round(ingestRate))} msgs/s (${(ingestRate / insertRate).toFixed(2)}× the faster insert baseline)${run.failed ? `, ${run.failed} failed` : ''}`,
  )
  console.log(
    `    delivery   first POST to last delivery: ${fmt(deliveryRate)} msgs/s (${(deliveryRate / rawRate).toFixed(2)}× raw delivery${run === first ? '' : `, ${(deliveryRate / rate(N, first.deliveredMs)).toFixed(2)}× --workers ${first.k}`})`,
  )
  console.log(
    `    relay      CPU ${Math.round(run.cpuUsPerMessage)} µs per delivered message, ingest included, all processes (${(run.cpuUsPerMessage / rawCpuUs).toFixed(2)}× the raw sender's${run === first ? '' : `, ${(run.cpuUsPerMessage / first.cpuUsPerMessage).toFixed(2)}× --workers ${first.k}`})${run.k > 1 ? `, of which the primary ${run.primaryCpuUsPerMessage.toFixed(1)} µs` : ''}${perMessage(run.server)}`,
  )
  const paced = run.paced
  console.log(
    `    paced      ${fmt(paced.messages)} more at ${fmt(WORKERS_RATE)} msgs/s (cores to spare): relay CPU ${Math.round(paced.cpuUsPerMessage)} µs per delivered message${run === first ? '' : ` (${(paced.cpuUsPerMessage / first.paced.cpuUsPerMessage).toFixed(2)}× --workers ${first.k})`}, ${paced.readsPerMessage.toFixed(1)} read system calls${perMessage(paced.server, paced.messages)}${paced.failed ? `, ${paced.failed} failed` : ''}`,
  )
  if (paced.statements) console.log(`               ${roundTrips(paced.statements, paced.messages)}`)
}
const tracklet = runs.find((run) => run.k === 1)
for (const run of runs) {
  const label =
    run.k === 'graphile'
      ? 'graphile-worker relay (the peer, bench/graphile-relay.mjs)'
      : `${run.k} relay${run.k === 1 ? '' : 's'}`
  const ingestRate = (N - run.failed) / (run.ingestMs / 1000)
  const deliveryRate = rate(N, run.deliveredMs)
  console.log(`  ${label}:`)
  console.log(
    `    ingest     SDK → relay, acknowledged after commit: ${fmt(Math.round(ingestRate))} msgs/s (${(ingestRate / insertRate).toFixed(2)}× the faster insert baseline)${run.failed ? `, ${run.failed} failed` : ''}`,
  )
  console.log(
    `    delivery   first call to last delivery: ${fmt(deliveryRate)} msgs/s (${(deliveryRate / rawRate).toFixed(2)}× raw delivery${run.k > 1 ? `, ${(deliveryRate / rate(N, runs[0].deliveredMs)).toFixed(2)}× ${runs[0].k} relay` : ''})`,
  )
  if (run.statements) console.log(`    ${roundTrips(run.statements, N)}`)
  console.log(
    `    latency    call → webhook, burst p50 ${percentile(run.burstLatency, 50)} ms, p99 ${percentile(run.burstLatency, 99)} ms; paced 2,000 at ~1,000/s p50 ${percentile(run.pacedLatency, 50)} ms, p99 ${percentile(run.pacedLatency, 99)} ms`,
  )
  console.log(
    `    relay      CPU ${Math.round(run.cpuUsPerMessage)} µs per delivered message (ingest included, all relays), peak RSS ${run.peakRss.map((b) => `${(b / 1e6).toFixed(0)} MB`).join(' / ')}`,
  )
  if (run.serverCost) console.log(`    server     burst${perMessage(run.serverCost)}`)
  // Where the server's time goes (what stands between it and the CPU aim): the top statements.
  if (run.times)
    console.log(
      `    statements server time per message (pg_stat_statements): ${run.times
        .slice(0, 6)
        .map((t) => `${t.kind} ${((t.ms * 1000) / N).toFixed(1)} µs (${fmt(t.calls)} calls)`)
        .join('; ')}`,
    )
}
const peer = runs.find((run) => run.k === 'graphile')
if (tracklet && peer) {
  const ingestRate = (run) => (N - run.failed) / run.ingestMs
  const perMsg = (run, key) => run.serverCost[key] / N
  console.log(
    `  peer ratio, Tracklet (1 relay) ÷ graphile-worker, same burst: ingest ${(ingestRate(tracklet) / ingestRate(peer)).toFixed(2)}× (aim ≥ 1.2×), delivery ${(peer.deliveredMs / tracklet.deliveredMs).toFixed(2)}× (aim ≥ 1.3×), server CPU per message ${(perMsg(tracklet, 'cpuMs') / perMsg(peer, 'cpuMs')).toFixed(2)}× (aim ≤ 0.6×), WAL per message ${fmt(Math.round(perMsg(tracklet, 'walBytes')))} vs ${fmt(Math.round(perMsg(peer, 'walBytes')))} B (aim ≤ 1,200), relay CPU per message ${(tracklet.cpuUsPerMessage / peer.cpuUsPerMessage).toFixed(2)}×`,
  )
}
for (const [title, breakdown, count] of walDetails) printWalBreakdown(title, breakdown, count)

// BENCH_JSON=file: the issue's figures of this run, for bench/relay-issue.mjs to print beside the
// other store's and the plans' (one run, every figure).
if (process.env.BENCH_JSON) {
  const figures = { store: STORE, messages: N, ids: RANDOM_IDS ? 'random' : 'ordered' }
  if (alone) {
    figures.ingestOnlyVsInserts = (N - alone.ingest.failed) / (alone.ingest.ms / 1000) / insertRate
    figures.bothPathsVsRawSenderCpu = (alone.ingest.cpuUs + alone.delivery.cpuUs) / N / rawCpuUs
  }
  if (tracklet && peer) {
    const ingestRate = (run) => (N - run.failed) / run.ingestMs
    const perMsg = (run, key) => run.serverCost[key] / N
    figures.peer = {
      ingest: ingestRate(tracklet) / ingestRate(peer),
      delivery: peer.deliveredMs / tracklet.deliveredMs,
      serverCpu: perMsg(tracklet, 'cpuMs') / perMsg(peer, 'cpuMs'),
      walBytes: perMsg(tracklet, 'walBytes'),
      peerWalBytes: perMsg(peer, 'walBytes'),
      statements: tracklet.times?.slice(0, 6).map((t) => ({ kind: t.kind, usPerMessage: (t.ms * 1000) / N })),
    }
  }
  writeFileSync(process.env.BENCH_JSON, JSON.stringify(figures))
}
