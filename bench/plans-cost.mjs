// node bench/plans-cost.mjs — what a message breaking its tracking plan pays at ingest, part by
// part (docs/plans.md), on one thread without I/O but the violations' write: the check of a valid
// message, the check of a violating one (validation, findings, violations, `omit`'s copy), the
// copy alone (this build's against a structuredClone of the field, what it replaced), the
// message's JSON written again, and the violations' write into a SQLite store (per violation, in
// batches of 10 as a 100-message request with one in ten violating gives). Median of 5 rounds, µs
// per message. The whole-ingest ratio is bench/plans.mjs's.
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
  const check = planCheck(store.violations)
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
  const violations = verdicts.flatMap((v) => v.violations)
  const started = process.hrtime.bigint()
  for (let i = 0; i < violations.length; i += 10) await store.violations.record(violations.slice(i, i + 10))
  parts['the violations’ write (SQLite, 10 a call)'] = Number(process.hrtime.bigint() - started) / 1000 / N
  console.log(`what a message pays for a 5-property plan, µs per message (${N.toLocaleString('en-US')} messages):`)
  for (const [part, us] of Object.entries(parts)) console.log(`  ${us.toFixed(2).padStart(7)}  ${part}`)
} finally {
  await store.close()
  rmSync(dir, { recursive: true, force: true })
}
