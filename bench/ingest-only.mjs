// Ingest only, on either store, alone and quick: bench:relay's ingest-only phase (a relay whose
// webhook never answers takes N messages in batches of FLUSH_AT, 8 requests in flight) between two
// runs of the store's raw insert baseline (bench/store-baselines.mjs); prints msgs/s, the relay's
// CPU µs per message and the ratio to the faster baseline (issue 43's aim: ≥ 0.5×). With
// `--server` a second relay build (another worktree's bench/relay-server.mjs) runs after this one
// in each round, A B A B, and the ratio of the two is printed with its spread.
//   node bench/ingest-only.mjs --store postgres [--server /other/bench/relay-server.mjs]
//     [--profile DIR] (a --cpu-prof of the first round's relay, for bench/profile-window.mjs)
//     [--profile-interval µs] (the profile's sampling interval; V8's default is 1,000 µs)
//   BENCH_MESSAGES (default 30000), BENCH_FLUSH_AT (100), BENCH_RUNS (3), BENCH_IN_FLIGHT (8);
//   random UUID ids, as the SDK makes them. Run `npm run build` first (in both worktrees with
//   --server).
import { randomUUID } from 'node:crypto'
import { mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { startPostgresServer } from '../test/support/postgres-server.mjs'
import { measureServer } from './pg-server-cost.mjs'
import { startHoldingRelay, WRITE_KEY } from './holding-relay.mjs'
import { postBatches } from './post-batches.mjs'
import { postgresInsertBaseline, sqliteInsertBaseline } from './store-baselines.mjs'

const { values: args } = parseArgs({
  options: {
    store: { type: 'string', default: 'sqlite' },
    server: { type: 'string' },
    profile: { type: 'string' },
    'profile-interval': { type: 'string' },
  },
})
const STORES = ['sqlite', 'postgres']
if (!STORES.includes(args.store)) throw new Error('--store is sqlite or postgres')
const THIS = new URL('./relay-server.mjs', import.meta.url).pathname
const SERVERS = args.server ? [THIS, resolve(args.server)] : [THIS]
const N = Number(process.env.BENCH_MESSAGES ?? 30_000)
const FLUSH_AT = Number(process.env.BENCH_FLUSH_AT ?? 100)
const RUNS = Number(process.env.BENCH_RUNS ?? 3)
const IN_FLIGHT = Number(process.env.BENCH_IN_FLIGHT ?? 8) // as bench:relay's ingest-only phase

const message = (i) => ({
  userId: `user-${i % 5000}`,
  event: 'Order Completed',
  properties: { orderId: `o-${i}`, revenue: 9.99, currency: 'EUR', items: ['a', 'b'] },
})

const postgres =
  args.store === 'postgres'
    ? await startPostgresServer({ durable: true, settings: ['max_connections=200'] })
    : undefined
const dir = mkdtempSync(join(tmpdir(), 'tracklet-ingest-only-'))
const baselineDatabase = postgres ? await postgres.createDatabase('baseline') : undefined
let databases = 0

function insertMs() {
  if (postgres) return postgresInsertBaseline(baselineDatabase, N, 100, message, 1)
  return sqliteInsertBaseline(dir, N, 100, message)
}

function bodies() {
  const out = []
  for (let i = 0; i < N; i += FLUSH_AT) {
    const batch = []
    for (let j = i; j < Math.min(N, i + FLUSH_AT); j++)
      batch.push({
        type: 'track',
        messageId: randomUUID(),
        timestamp: new Date().toISOString(),
        ...message(j),
      })
    out.push(JSON.stringify({ batch, sentAt: new Date().toISOString() }))
  }
  return out
}

// One relay (the build of `server`) on a fresh store takes N messages; answers ms and CPU µs.
async function ingestOnce(server, profile) {
  const name = `ingest_${databases++}`
  const database = postgres ? await postgres.createDatabase(name) : join(dir, `${name}.db`)
  const every = args['profile-interval']
  const interval = every ? [`--cpu-prof-interval=${every}`] : []
  const execArgv = profile ? ['--cpu-prof', `--cpu-prof-dir=${profile}`, ...interval] : []
  const relay = await startHoldingRelay(server, database, execArgv)
  const all = bodies()
  const cpuBefore = await relay.cpuMs()
  const serverCost = postgres ? await measureServer(postgres) : undefined
  const started = performance.now()
  const failed =
    FLUSH_AT * (await postBatches(`${relay.url}/v1/batch`, all, { writeKey: WRITE_KEY, inFlight: IN_FLIGHT }))
  const ms = performance.now() - started
  const cpuUs = ((await relay.cpuMs()) - cpuBefore) * 1000
  const serverUs = ((await serverCost?.stop())?.cpuMs ?? Number.NaN) * 1000
  // SQLite: how large the WAL grew (its checkpoints keep it bounded).
  const walMb = postgres ? undefined : statSync(`${database}-wal`).size / 2 ** 20
  await relay.stop()
  if (failed > 0) throw new Error(`${failed} messages failed`)
  return { ms, cpuUs, serverUs, walMb }
}

const mib = (n) => `${n.toFixed(1)} MiB`
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2
}
const results = SERVERS.map(() => [])
try {
  for (let run = 0; run < RUNS; run++) {
    const before = await insertMs()
    const runs = []
    const profile = run === 0 ? args.profile : undefined
    for (const server of SERVERS) runs.push(await ingestOnce(server, profile))
    const insertRate = N / (Math.min(before, await insertMs()) / 1000)
    runs.forEach(({ ms, cpuUs, serverUs, walMb }, i) => {
      const rate = N / (ms / 1000)
      results[i].push({ ratio: rate / insertRate, cpu: cpuUs / N, rate, server: serverUs / N })
      console.log(
        `round ${run + 1} ${i === 0 ? 'this' : 'other'}: raw inserts ${Math.round(insertRate)} ` +
          `rows/s; ingest only ${Math.round(rate)} msgs/s (${(rate / insertRate).toFixed(2)}×), ` +
          `${(cpuUs / N).toFixed(1)} µs relay CPU per message` +
          (postgres ? `, server CPU ${(serverUs / N).toFixed(1)} µs` : `, WAL ${mib(walMb)}`),
      )
    })
  }
} finally {
  await postgres?.stop()
  rmSync(dir, { recursive: true, force: true })
}
const line = (rs) =>
  `ratio to raw inserts median ${median(rs.map((r) => r.ratio)).toFixed(2)}×, relay CPU median ` +
  `${median(rs.map((r) => r.cpu)).toFixed(1)} µs per message` +
  (postgres ? `, PostgreSQL CPU median ${median(rs.map((r) => r.server)).toFixed(1)} µs` : '')
console.log(`${args.store}, ${N} messages, ${RUNS} rounds: this build ${line(results[0])}`)
if (SERVERS.length > 1) {
  console.log(`  other build ${line(results[1])}`)
  const rates = results[0].map((r, i) => r.rate / results[1][i].rate)
  const cpus = results[0].map((r, i) => r.cpu / results[1][i].cpu)
  const f = (x) => x.toFixed(2)
  const spread = (xs) => `median ${f(median(xs))} (${f(Math.min(...xs))}–${f(Math.max(...xs))})`
  console.log(`  this ÷ other, msgs/s ${spread(rates)}; CPU per message ${spread(cpus)}`)
  const servers = results[0].map((r, i) => r.server / results[1][i].server)
  if (postgres) console.log(`  PostgreSQL CPU ${spread(servers)}`)
}
