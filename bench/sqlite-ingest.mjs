// SQLite ingest only, alone and quick: the raw insert baseline (bench/store-baselines.mjs), then a
// relay whose webhook never answers takes N messages in batches, then the baseline again; prints
// both rates and the ratio to the faster baseline (issue 28's aim: ingest only >= 0.5x the raw
// inserts), for each of BENCH_RUNS rounds (default 3) and their median: a shared disk's fsync
// time drifts between and within runs. Faster to repeat than bench:relay, so a change can be
// measured A B A B against another build of the relay:
//   node bench/sqlite-ingest.mjs [--server /other/worktree/bench/relay-server.mjs] [--profile DIR]
//   (BENCH_MESSAGES, BENCH_FLUSH_AT as in bench:relay; run `npm run build` first)
import { fork } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import http from 'node:http'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { postBatches } from './post-batches.mjs'
import { sqliteInsertBaseline } from './store-baselines.mjs'

const { values: args } = parseArgs({ options: { server: { type: 'string' }, profile: { type: 'string' } } })
const SERVER = args.server ? resolve(args.server) : new URL('./relay-server.mjs', import.meta.url).pathname
const N = Number(process.env.BENCH_MESSAGES ?? 20_000)
const FLUSH_AT = Number(process.env.BENCH_FLUSH_AT ?? 100)
const RUNS = Number(process.env.BENCH_RUNS ?? 3)
const IN_FLIGHT = 8 // as bench:relay's ingest-only phase
const WRITE_KEY = 'bench-write-key'

const message = (i) => ({
  userId: `user-${i % 5000}`,
  event: 'Order Completed',
  properties: { orderId: `o-${i}`, revenue: 9.99, currency: 'EUR', items: ['a', 'b'] },
})

// One round: baseline, the relay's ingest only (a profile of the first round's relay with --profile), baseline.
async function runOnce(run) {
  const dir = mkdtempSync(join(tmpdir(), 'tracklet-sqlite-ingest-'))
  const holding = http.createServer((req) => req.resume())
  await new Promise((done) => holding.listen(0, '127.0.0.1', done))
  const hookUrl = `http://127.0.0.1:${holding.address().port}/hold`

  const insertBefore = sqliteInsertBaseline(dir, N, 100, message)

  const child = fork(
    SERVER,
    [
      JSON.stringify({
        port: 0,
        database: join(dir, 'relay.db'),
        allowPrivateNetworks: true,
        webhookTimeout: 600_000,
        sources: [
          {
            name: 'bench',
            writeKey: WRITE_KEY,
            destinations: { Webhooks: { webhooks: [{ url: hookUrl }], sharedSecret: 'bench-shared-secret' } },
          },
        ],
      }),
    ],
    { execArgv: args.profile && run === 0 ? ['--cpu-prof', `--cpu-prof-dir=${args.profile}`] : [] },
  )
  const next = () => new Promise((done) => child.once('message', done))
  const { url } = await next()

  const bodies = []
  for (let i = 0; i < N; i += FLUSH_AT) {
    const batch = []
    for (let j = i; j < Math.min(N, i + FLUSH_AT); j++)
      batch.push({ type: 'track', messageId: `m-${j}`, timestamp: new Date().toISOString(), ...message(j) })
    bodies.push(JSON.stringify({ batch, sentAt: new Date().toISOString() }))
  }
  child.send('usage')
  const cpuBefore = (await next()).cpuMs
  const started = performance.now()
  const failed = FLUSH_AT * (await postBatches(`${url}/v1/batch`, bodies, { writeKey: WRITE_KEY, inFlight: IN_FLIGHT }))
  const ingestMs = performance.now() - started
  child.send('usage')
  const cpuUs = ((await next()).cpuMs - cpuBefore) * 1000
  child.send('stop')
  await next()
  holding.closeAllConnections()
  holding.close()
  const insertAfter = sqliteInsertBaseline(dir, N, 100, message)
  rmSync(dir, { recursive: true, force: true })

  const insertRate = N / (Math.min(insertBefore, insertAfter) / 1000)
  const ingestRate = N / (ingestMs / 1000)
  const ratio = ingestRate / insertRate
  console.log(
    `raw inserts ${Math.round(insertRate)} rows/s (the faster of before and after); ingest only ${Math.round(ingestRate)} msgs/s, ` +
      `${(cpuUs / N).toFixed(1)} µs relay CPU per message${failed ? `, ${failed} failed` : ''}; ` +
      `ratio ${ratio.toFixed(2)}`,
  )
  return ratio
}

const ratios = []
for (let run = 0; run < RUNS; run++) ratios.push(await runOnce(run))
ratios.sort((a, b) => a - b)
const median = RUNS % 2 === 1 ? ratios[RUNS >> 1] : (ratios[RUNS / 2 - 1] + ratios[RUNS / 2]) / 2
console.log(`ratio, median of ${RUNS}: ${median.toFixed(2)} (aim >= 0.5)`)
