// node bench/suppressions.mjs — ingest only, a relay holding 100,000 suppressed user ids against
// the same relay holding none, in the same run: two relays on SQLite files, each message's
// delivery written to its outbox (the webhook never answers, so delivery holds back after its
// first requests). No message sent is from a suppressed user: every one is looked up and stored,
// so the difference is the lookup alone. Rounds alternate A B A B; the ratio is taken per pair
// and its median printed. Then the lookup alone, in process: the privacy check (bundled from
// src/ by esbuild) over 1,000,000 messages with 100,000 suppressed ids against none, set beside
// the time ingest takes per message.
//   BENCH_ROUNDS=8 BENCH_BATCHES=200 BENCH_SUPPRESSED=100000 node bench/suppressions.mjs   (after npm run build)
import { mkdtempSync, rmSync } from 'node:fs'
import http from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { request } from 'undici'
import { build } from 'esbuild'
import { createRelay } from '../dist/relay/index.js'

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 6)
const BATCHES = Number(process.env.BENCH_BATCHES ?? 150)
const SUPPRESSED = Number(process.env.BENCH_SUPPRESSED ?? 100_000)
const BATCH = 100
const IN_FLIGHT = 8
const PER_CALL = 5000
const ADMIN = 'bench-admin-token-xxxxxxxx'

const dir = mkdtempSync(join(tmpdir(), 'tracklet-bench-suppressions-'))
// A receiver that never answers: deliveries are written, then held.
const held = []
const receiver = http.createServer((req) => held.push(req))
await new Promise((resolve) => receiver.listen(0, '127.0.0.1', resolve))
const hook = `http://127.0.0.1:${receiver.address().port}/hook`

async function start(name) {
  return createRelay({
    port: 0,
    database: join(dir, `${name}.db`),
    adminToken: ADMIN,
    allowPrivateNetworks: true,
    logLevel: 'error',
    sources: [{ name: 'web', writeKey: 'wk', destinations: { Webhooks: { webhooks: [{ url: hook }] } } }],
  })
}

const suppressing = await start('suppressing')
const none = await start('none')
// Half of every source, half of `web` alone: both kinds of entry are looked up.
for (let first = 0; first < SUPPRESSED; first += PER_CALL) {
  const userIds = Array.from({ length: Math.min(PER_CALL, SUPPRESSED - first) }, (_, i) => `gone-${first + i}`)
  const source = (first / PER_CALL) % 2 === 0 ? {} : { source: 'web' }
  const response = await request(`${suppressing.url}/v1/suppressions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ userIds, ...source }),
  })
  if (response.statusCode !== 200) throw new Error(`suppressing answered ${response.statusCode}`)
  await response.body.dump()
}
const auth = `Basic ${Buffer.from('wk:').toString('base64')}`
let serial = 0

function body() {
  const batch = []
  for (let i = 0; i < BATCH; i++) {
    const n = serial++
    batch.push({ type: 'track', userId: `u${n % 1000}`, event: 'Viewed', messageId: `m-${n}`, properties: { n } })
  }
  return JSON.stringify({ batch })
}

// Messages per second acknowledged by `relay` for BATCHES batches, IN_FLIGHT requests at once.
async function ingest(relay) {
  const bodies = Array.from({ length: BATCHES }, body)
  let next = 0
  const started = process.hrtime.bigint()
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (next < bodies.length) {
        const response = await request(`${relay.url}/v1/batch`, {
          method: 'POST',
          headers: { authorization: auth, 'content-type': 'application/json' },
          body: bodies[next++],
        })
        await response.body.dump()
        if (response.statusCode !== 200) throw new Error(`ingest answered ${response.statusCode}`)
      }
    }),
  )
  const seconds = Number(process.hrtime.bigint() - started) / 1e9
  return (BATCHES * BATCH) / seconds
}

await ingest(suppressing)
await ingest(none)
const ratios = []
const noneRates = []
for (let round = 0; round < ROUNDS; round++) {
  const a = round % 2 === 0 ? await ingest(suppressing) : undefined
  const b = await ingest(none)
  noneRates.push(b)
  const a2 = a ?? (await ingest(suppressing))
  ratios.push(a2 / b)
  console.log(
    `round ${round + 1}: ${SUPPRESSED} suppressed ${a2.toFixed(0)} msg/s, none ${b.toFixed(0)} msg/s, ratio ${(a2 / b).toFixed(3)}`,
  )
}
ratios.sort((x, y) => x - y)
const lookup = await lookupCost()
console.log(
  `the check per message: ${lookup.none.toFixed(0)} ns with none suppressed, ${lookup.many.toFixed(0)} ns with ${SUPPRESSED}` +
    ` (ingest takes ${(1e6 / noneRates.sort((x, y) => x - y)[noneRates.length >> 1]).toFixed(0)} µs per message)`,
)
console.log(
  `median ratio (${SUPPRESSED} suppressed ids / none): ${ratios[Math.floor(ratios.length / 2)].toFixed(3)}` +
    ` (min ${ratios[0].toFixed(3)}, max ${ratios.at(-1).toFixed(3)})`,
)
for (const req of held) req.socket.destroy()
await suppressing.close()
await none.close()
receiver.close()
rmSync(dir, { recursive: true, force: true })

// ns per message of the privacy check (suppression lookup, no consent rule), with and without the ids.
async function lookupCost() {
  const outdir = join(dir, 'check')
  await build({
    entryPoints: ['src/relay/features/privacy/privacy-check.ts', 'src/relay/features/privacy/suppression-set.ts'],
    bundle: true,
    format: 'esm',
    platform: 'node',
    outdir,
    logLevel: 'error',
  })
  const { privacyCheck } = await import(join(outdir, 'privacy-check.js'))
  const { SuppressionSet } = await import(join(outdir, 'suppression-set.js'))
  const ids = Array.from({ length: SUPPRESSED }, (_, i) => ({ userId: `gone-${i}`, at: 0 }))
  const source = { name: 'web', destinations: ['Webhooks'] }
  const messages = Array.from({ length: 1000 }, (_, i) => ({ type: 'track', userId: `u${i}`, event: 'Viewed' }))
  const time = (set) => {
    const check = privacyCheck({ suppressed: () => set, consentOf: () => undefined })
    let blocked = 0
    const started = process.hrtime.bigint()
    for (let round = 0; round < 1000; round++) for (const m of messages) if (check(m, source)) blocked++
    if (blocked !== 0) throw new Error('a message was suppressed')
    return Number(process.hrtime.bigint() - started) / 1e6
  }
  const many = new SuppressionSet(ids)
  const none = new SuppressionSet()
  time(many)
  time(none)
  const runs = { many: [], none: [] }
  for (let i = 0; i < 5; i++) {
    runs.many.push(time(many))
    runs.none.push(time(none))
  }
  const median = (xs) => xs.sort((x, y) => x - y)[2]
  return { many: median(runs.many), none: median(runs.none) }
}
