// node bench/plans.mjs — ingest only, a source with a 20-event tracking plan (violations: 'omit')
// against the same source without a plan, in the same run: two relays on SQLite files, each
// messages' deliveries written to its outbox (the webhook never answers, so delivery holds back
// after its first requests). Rounds alternate A B A B; the ratio is taken per pair and its median
// printed. One message in ten breaks its event's schema (a string revenue: omit removes it).
// Beside msgs/s, the process's CPU per message acknowledged (both relays run in this process, the
// other one idle but for its held deliveries): the figure a loaded machine moves least.
//   BENCH_ROUNDS=8 BENCH_BATCHES=200 node bench/plans.mjs   (after npm run build)
//   BENCH_DIST=.tmp/dist-before node bench/plans.mjs   (another build of the package)
//   BENCH_JSON=file   (the medians, for bench/relay-issue.mjs)
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import http from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { request } from 'undici'

const DIST = process.env.BENCH_DIST ?? join(import.meta.dirname, '..', 'dist')
const { createRelay } = await import(pathToFileURL(join(DIST, 'relay', 'index.js')).href)

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 6)
const BATCHES = Number(process.env.BENCH_BATCHES ?? 150)
const BATCH = 100
const IN_FLIGHT = 8
// One message in this many breaks its schema (0: none).
const INVALID_EVERY = Number(process.env.BENCH_INVALID_EVERY ?? 10) || Number.POSITIVE_INFINITY
const EVENTS = Array.from({ length: 20 }, (_, i) => `Event ${i}`)

const plan = {
  events: Object.fromEntries(
    EVENTS.map((name) => [
      name,
      {
        properties: {
          type: 'object',
          properties: {
            revenue: { type: 'number', minimum: 0 },
            currency: { type: 'string', enum: ['EUR', 'USD'] },
            sku: { type: 'string', maxLength: 40 },
            quantity: { type: 'integer' },
          },
          required: ['revenue'],
          additionalProperties: false,
        },
      },
    ]),
  ),
}

const dir = mkdtempSync(join(tmpdir(), 'tracklet-bench-plans-'))
// A receiver that never answers: deliveries are written, then held.
const held = []
const receiver = http.createServer((req) => held.push(req))
await new Promise((resolve) => receiver.listen(0, '127.0.0.1', resolve))
const hook = `http://127.0.0.1:${receiver.address().port}/hook`

async function start(name, schema) {
  return createRelay({
    port: 0,
    database: join(dir, `${name}.db`),
    adminToken: 'bench-admin-token-xxxxxxxx',
    allowPrivateNetworks: true,
    logLevel: 'error',
    sources: [
      {
        name: 'web',
        writeKey: 'wk',
        destinations: { Webhooks: { webhooks: [{ url: hook }] } },
        ...(schema ? { schema } : {}),
      },
    ],
  })
}

const withPlan = await start('plan', { plan, violations: 'omit' })
const without = await start('none')
const auth = `Basic ${Buffer.from('wk:').toString('base64')}`
let serial = 0

function body() {
  const batch = []
  for (let i = 0; i < BATCH; i++) {
    const n = serial++
    batch.push({
      type: 'track',
      userId: `u${n % 1000}`,
      event: EVENTS[n % EVENTS.length],
      messageId: `m-${n}`,
      properties: {
        revenue: n % INVALID_EVERY === 0 ? 'nine' : 9.99,
        currency: 'EUR',
        sku: `sku-${n % 50}`,
        quantity: 2,
      },
    })
  }
  return JSON.stringify({ batch })
}

// Messages per second acknowledged by `relay` for BATCHES batches, IN_FLIGHT requests at once, and
// the process's CPU µs per message meanwhile.
async function ingest(relay) {
  const bodies = Array.from({ length: BATCHES }, body)
  let next = 0
  const cpu = process.cpuUsage()
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
  const used = process.cpuUsage(cpu)
  return { rate: (BATCHES * BATCH) / seconds, cpuUs: (used.user + used.system) / (BATCHES * BATCH) }
}

await ingest(withPlan)
await ingest(without)
const ratios = []
const cpuRatios = []
for (let round = 0; round < ROUNDS; round++) {
  const a = round % 2 === 0 ? await ingest(withPlan) : undefined
  const b = await ingest(without)
  const a2 = a ?? (await ingest(withPlan))
  ratios.push(a2.rate / b.rate)
  cpuRatios.push(a2.cpuUs / b.cpuUs)
  console.log(
    `round ${round + 1}: with a plan ${a2.rate.toFixed(0)} msg/s (${a2.cpuUs.toFixed(1)} µs CPU each), without ${b.rate.toFixed(0)} msg/s (${b.cpuUs.toFixed(1)} µs), ratio ${(a2.rate / b.rate).toFixed(3)}, CPU ratio ${(a2.cpuUs / b.cpuUs).toFixed(3)}`,
  )
}
const median = (xs) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]
console.log(
  `median ratio (with a 20-event plan, omit / without a plan): ${median(ratios).toFixed(3)}; CPU per message ${median(cpuRatios).toFixed(3)}× (one message in ${INVALID_EVERY} violating)`,
)
if (process.env.BENCH_JSON)
  writeFileSync(process.env.BENCH_JSON, JSON.stringify({ ratio: median(ratios), cpuRatio: median(cpuRatios) }))
for (const req of held) req.socket.destroy()
await withPlan.close()
await without.close()
receiver.close()
rmSync(dir, { recursive: true, force: true })
