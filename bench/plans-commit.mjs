// node bench/plans-commit.mjs — what tracking plans' violations cost ingest's commit, in one
// process without HTTP: ingest() over a SQLite file (WAL), 8 requests of 100 messages at once (one
// group commit), one message in ten breaking its schema (`omit`). Three variants, each round in
// another order,
// the process's CPU per message acknowledged and msg/s, ratios to `none` per round, medians:
//   none      the same source without a plan;
//   joined    a plan, its violations in the deliveries' own transaction (enqueueWithViolations);
//   separate  a plan, its violations in a write of their own right after the deliveries' commit
//             (the store without enqueueWithViolations: how PostgreSQL writes them, and how
//             SQLite did before).
//   BENCH_ROUNDS=6 BENCH_REQUESTS=400 node bench/plans-commit.mjs
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { importSource } from './load-source.mjs'

const { GroupCommit, ingest, planCheck, openSqliteStore, validateRelayOptions, SourceRegistry } = await importSource(`
  export { GroupCommit } from './src/relay/ingest/group-commit'
  export { ingest } from './src/relay/ingest/ingest'
  export { planCheck } from './src/relay/features/plans/plan-check'
  export { openSqliteStore } from './src/relay/store/sqlite/sqlite-store'
  export { validateRelayOptions } from './src/relay/config/validate'
  export { SourceRegistry } from './src/relay/sources/source-registry'
`)

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 6)
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 400)
const BATCH = 100
const IN_FLIGHT = 8
const EVENTS = Array.from({ length: 20 }, (_, i) => `Event ${i}`)
const properties = {
  type: 'object',
  properties: {
    revenue: { type: 'number', minimum: 0 },
    currency: { type: 'string', enum: ['EUR', 'USD'] },
    sku: { type: 'string', maxLength: 40 },
    quantity: { type: 'integer' },
  },
  required: ['revenue'],
  additionalProperties: false,
}
const plan = { events: Object.fromEntries(EVENTS.map((name) => [name, { properties }])) }
const webhooks = { webhooks: [{ url: 'https://example.com/hook' }] }
const options = validateRelayOptions({
  sources: [
    { name: 'plan', writeKey: 'k1', destinations: { Webhooks: webhooks }, schema: { plan, violations: 'omit' } },
    { name: 'none', writeKey: 'k2', destinations: { Webhooks: webhooks } },
  ],
})
const [withPlan, without] = new SourceRegistry(options.sources).routed()

const dir = mkdtempSync(join(tmpdir(), 'tracklet-bench-plans-commit-'))
const store = await openSqliteStore(join(dir, 'outbox.db'))
// The same store, but for the write that takes violations: GroupCommit writes them on their own.
const apart = { enqueue: (d) => store.enqueue(d), violations: store.violations }
const variants = {
  none: { commits: new GroupCommit(store), source: without },
  joined: { commits: new GroupCommit(store), source: withPlan },
  separate: { commits: new GroupCommit(apart), source: withPlan },
}
const check = planCheck()
let serial = 0

function batch() {
  return Array.from({ length: BATCH }, () => {
    const n = serial++
    return {
      type: 'track',
      userId: `u${n % 1000}`,
      event: EVENTS[n % EVENTS.length],
      messageId: `m-${n}`,
      properties: { revenue: n % 10 === 0 ? 'nine' : 9.99, currency: 'EUR', sku: `sku-${n % 50}`, quantity: 2 },
    }
  })
}

async function run({ commits, source }) {
  const batches = Array.from({ length: REQUESTS }, batch)
  let next = 0
  const cpu = process.cpuUsage()
  const started = process.hrtime.bigint()
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (next < batches.length) await ingest(commits, source, batches[next++], {}, check)
    }),
  )
  const seconds = Number(process.hrtime.bigint() - started) / 1e9
  const { user, system } = process.cpuUsage(cpu)
  const messages = REQUESTS * BATCH
  return { rate: messages / seconds, cpuUs: (user + system) / messages }
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
try {
  for (const v of Object.values(variants)) await run(v)
  const ratios = { joined: [], separate: [] }
  const cpuRatios = { joined: [], separate: [] }
  for (let round = 0; round < ROUNDS; round++) {
    // The outbox grows as the rounds go: each variant runs first, in the middle and last in turn.
    const order = [
      ['none', 'joined', 'separate'],
      ['separate', 'none', 'joined'],
      ['joined', 'separate', 'none'],
    ][round % 3]
    const results = {}
    for (const name of order) results[name] = await run(variants[name])
    const { none } = results
    for (const name of ['joined', 'separate']) {
      ratios[name].push(results[name].rate / none.rate)
      cpuRatios[name].push(results[name].cpuUs / none.cpuUs)
    }
    const shown = order.map(
      (name) => `${name} ${results[name].rate.toFixed(0)} msg/s ${results[name].cpuUs.toFixed(1)} µs`,
    )
    console.log(`round ${round + 1}: ${shown.join(', ')}`)
  }
  for (const name of ['joined', 'separate']) {
    console.log(
      `${name} ÷ none: ${median(ratios[name]).toFixed(3)}× msg/s, ${median(cpuRatios[name]).toFixed(3)}× CPU per message (median of ${ROUNDS})`,
    )
  }
} finally {
  await store.close()
  rmSync(dir, { recursive: true, force: true })
}
