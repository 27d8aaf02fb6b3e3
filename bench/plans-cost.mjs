// node bench/plans-cost.mjs — what a message breaking its tracking plan pays at ingest, part by
// part (docs/plans.md), on one thread without I/O but the violations' write: the check of a valid
// message, the check of a violating one (validation, findings, violations, `omit`'s copy), the
// copy alone (this build's against a structuredClone of the field, what it replaced), the
// message's JSON written again, and the violations' write into a SQLite file: in a commit of
// their own (ViolationStore.record, 10 messages' a call, as a 100-message request with one in ten
// violating gives: how ingest wrote them before), and in the commit of that request's 100
// deliveries (enqueueWithViolations, as ingest writes them now: what that commit costs more than
// the deliveries' alone). Median of 5 rounds, µs per violating message. The whole-ingest ratio is
// bench/plans.mjs's.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { importSource } from './load-source.mjs'

const { planCheck, withoutPointers, openSqliteStore } = await importSource(`
  export { planCheck } from './src/relay/features/plans/plan-check'
  export { withoutPointers } from './src/relay/features/plans/plan-mend'
  export { openSqliteStore } from './src/relay/store/sqlite/sqlite-store'
`)

const N = Number(process.env.BENCH_MESSAGES ?? 20_000)
const schema = {
  type: 'object',
  properties: {
    revenue: { type: 'number', minimum: 0 },
    currency: { type: 'string', enum: ['EUR', 'USD'] },
    sku: { type: 'string', maxLength: 40 },
    quantity: { type: 'integer' },
    items: { type: 'array' },
  },
  required: ['revenue'],
  additionalProperties: false,
}
const plan = { events: { 'Order Completed': { properties: schema } } }
const source = { name: 'web', tracking: { plan, unplanned: 'allow', violations: 'omit' } }
const message = (n, revenue) =>
  JSON.parse(
    JSON.stringify({
      type: 'track',
      messageId: `m-${n}`,
      userId: `u${n % 1000}`,
      event: 'Order Completed',
      timestamp: '2026-03-01T10:00:00.000Z',
      context: { library: { name: 'tracklet', version: '1.0.0' }, page: { path: '/checkout', title: 'Pay' } },
      properties: { revenue, currency: 'EUR', sku: `sku-${n % 50}`, quantity: 2, items: [{ id: 'a' }, { id: 'b' }] },
    }),
  )
const valid = Array.from({ length: N }, (_, n) => message(n, 9.99))
const broken = Array.from({ length: N }, (_, n) => message(n, 'nine'))

function time(fn) {
  const rounds = []
  for (let r = 0; r < 5; r++) {
    const started = process.hrtime.bigint()
    fn()
    rounds.push(Number(process.hrtime.bigint() - started) / 1000 / N)
  }
  return rounds.sort((a, b) => a - b)[2]
}

const dir = mkdtempSync(join(tmpdir(), 'tracklet-bench-plans-cost-'))
const store = await openSqliteStore(join(dir, 'outbox.db'))
try {
  const check = planCheck()
  const verdicts = broken.map((m) => check(m, source))
  const parts = {
    'check, a valid message': time(() => {
      for (const m of valid) check(m, source)
    }),
    'check, a violating one (all of the below but the write)': time(() => {
      for (const m of broken) check(m, source)
    }),
    'omit’s copy of properties (this build)': time(() => {
      for (const m of broken) withoutPointers(m.properties, ['/revenue'])
    }),
    'omit’s copy of properties (structuredClone, before)': time(() => {
      for (const m of broken) {
        const copy = structuredClone(m.properties)
        delete copy.revenue
      }
    }),
    'the mended message’s JSON written again': time(() => {
      for (const v of verdicts) JSON.stringify(v.message)
    }),
  }
  // Each of 10 messages' violations (of 2,000 messages: a commit of 100 deliveries each), and a
  // request's 100 deliveries.
  const tens = Array.from({ length: Math.min(N, 2000) / 10 }, (_, i) =>
    verdicts.slice(i * 10, i * 10 + 10).flatMap((v) => v.violations),
  )
  let serial = 0
  const request = () =>
    Array.from({ length: 100 }, () => ({
      source: 'web',
      destination: 'Webhooks',
      messageId: `d-${serial++}`,
      type: 'track',
      json: JSON.stringify(valid[serial % N]),
    }))
  const requests = tens.map(request)
  // The process's CPU (the disk's waits left out: they vary most on a shared machine), µs per
  // violating message, of one pass over the requests.
  const cpu = async (write) => {
    const used = process.cpuUsage()
    for (let i = 0; i < tens.length; i++) await write(i)
    for (const d of requests) for (const each of d) each.messageId = `d-${serial++}`
    const { user, system } = process.cpuUsage(used)
    return (user + system) / (tens.length * 10)
  }
  const own = []
  const added = []
  for (let r = 0; r < 5; r++) {
    own.push(await cpu((i) => store.violations.record(tens[i])))
    const alone = await cpu((i) => store.enqueue(requests[i]))
    added.push((await cpu((i) => store.enqueueWithViolations(requests[i], tens[i], () => {}))) - alone)
  }
  const median = (xs) => xs.sort((a, b) => a - b)[2]
  parts['the violations’ write, a commit of its own (10 messages’ a call; CPU)'] = median(own)
  parts['the violations’ write, in their request’s commit (what it adds; CPU)'] = median(added)
  console.log(`what a message pays for a 5-property plan, µs per message (${N.toLocaleString('en-US')} messages):`)
  for (const [part, us] of Object.entries(parts)) console.log(`  ${us.toFixed(2).padStart(7)}  ${part}`)
} finally {
  await store.close()
  rmSync(dir, { recursive: true, force: true })
}
