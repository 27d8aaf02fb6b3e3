// The SDK benchmark:  npm run bench  (builds, then runs this file)
//   node bench/sdk.mjs [--events=100000] [--runs=3] [--diagnose] [--profile]
//   (--gzip adds the SDK at flushAt 100 with gzip: true, to read its CPU cost beside gzip: false)
//
// Sends the same `track` events through a hand-written baseline and through the SDK (at its
// defaults and at flushAt 100) to a local sink in a second process, each variant in its own
// process, and prints events/s, client CPU seconds, peak RSS and the caller-side cost per call,
// with ratios against the baseline of the same run. Medians over the runs. Not a test: nothing
// is asserted, but a run that did not deliver every event exactly once is reported as invalid
// and the process exits non-zero. --diagnose adds the baseline capped at 20 and at 100 events per
// body (as many requests as the SDK makes), to tell the cost of more requests from the SDK's own.
// --profile writes a V8 CPU profile per client to .tmp/profiles (see profile-summary.mjs).
import { fork } from 'node:child_process'
import { once } from 'node:events'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { makeEvent } from './events.mjs'

const { values } = parseArgs({
  options: {
    events: { type: 'string', default: '100000' },
    runs: { type: 'string', default: '3' },
    diagnose: { type: 'boolean', default: false },
    profile: { type: 'boolean', default: false },
    gzip: { type: 'boolean', default: false },
  },
})
const EVENTS = Number(values.events)
const RUNS = Number(values.runs)
const VARIANTS = [
  { name: 'baseline', args: ['baseline'] },
  { name: 'sdk (defaults)', args: ['sdk'] },
  { name: 'sdk (flushAt 100)', args: ['sdk', '100'] },
  ...(values.gzip ? [{ name: 'sdk (flushAt 100) gzip', args: ['sdk', '100', 'gzip'] }] : []),
  ...(values.diagnose
    ? [
        { name: 'baseline (20 per body)', args: ['baseline', '20'] },
        { name: 'baseline (100 per body)', args: ['baseline', '100'] },
      ]
    : []),
]
const TARGETS = {
  'sdk (flushAt 100)': { cpu: 1.3, eventsPerSecond: 0.8, rss: 1.3, caller: 1.3 },
  'sdk (defaults)': { cpu: 2, caller: 1.3 },
}

/** The figures of the summary: how to read each from a run, its digits, and its targets. */
const FIGURES = [
  { title: 'events/s', pick: (r) => r.eventsPerSecond, digits: 0, target: 'eventsPerSecond', atLeast: true },
  { title: 'client CPU (s)', pick: (r) => r.cpuSeconds, digits: 2, target: 'cpu' },
  { title: 'peak RSS (MB)', pick: (r) => r.peakRssBytes / 1e6, digits: 0, target: 'rss' },
  { title: 'call (ns)', pick: (r) => r.callerNsPerCall, digits: 0, target: 'caller' },
  { title: 'call CPU (ns)', pick: (r) => r.callerCpuNsPerCall, digits: 0, target: 'caller' },
  { title: 'requests', pick: (r) => r.sink.requests, digits: 0, noRatio: true },
  { title: 'wire B/event', pick: (r) => r.sink.bodyBytes / r.sink.events, digits: 0, noRatio: true },
]

const sink = fork(fileURLToPath(new URL('sink.mjs', import.meta.url)))
const [{ port }] = await once(sink, 'message')
const endpoint = `http://127.0.0.1:${port}`

console.log(
  `${EVENTS.toLocaleString('en')} track events of ${Buffer.byteLength(JSON.stringify(makeEvent(0).properties))} bytes of properties, ` +
    `${RUNS} run(s), Node ${process.version}; sink in a second process\n`,
)

/** Per variant, per run: the figures of a valid run (every event delivered once), else undefined. */
const results = new Map(VARIANTS.map(({ name }) => [name, []]))
let invalid = 0
for (let run = 0; run < RUNS; run++) {
  // Rotate the order so that no variant always runs first (on a cold machine) or last.
  for (let v = 0; v < VARIANTS.length; v++) {
    const variant = VARIANTS[(run + v) % VARIANTS.length]
    const result = await runVariant(variant)
    const problem = checkDelivery(result)
    const line =
      `run ${run + 1}  ${pad(variant.name, 24)} ${fmt(result.eventsPerSecond, 0)} events/s  ${fmt(result.cpuSeconds, 2)} s CPU  ` +
      `${fmt(result.peakRssBytes / 1e6, 0)} MB RSS  calls ${fmt(result.callerNsPerCall, 0)} ns (CPU ${fmt(result.callerCpuNsPerCall, 0)} ns)  ` +
      `${result.sink.requests} requests  ${fmt(result.sink.bodyBytes / result.sink.events, 0)} B/event`
    console.log(problem === undefined ? line : `${line}  INVALID: ${problem}`)
    results.get(variant.name)[run] = problem === undefined ? result : undefined
    if (problem !== undefined) invalid += 1
  }
}
sink.disconnect()

printSummary()
process.exitCode = invalid === 0 ? 0 : 1

async function runVariant(variant) {
  sink.send({ cmd: 'reset' })
  await once(sink, 'message')
  const execArgv = values.profile
    ? [
        '--cpu-prof',
        '--cpu-prof-dir=.tmp/profiles',
        `--cpu-prof-name=${variant.name.replace(/\W+/g, '-')}-${Date.now()}.cpuprofile`,
      ]
    : []
  const client = fork(
    fileURLToPath(new URL('client.mjs', import.meta.url)),
    [variant.args[0], endpoint, String(EVENTS), ...variant.args.slice(1)],
    { execArgv },
  )
  let result
  client.on('message', (message) => (result = message))
  const [code] = await once(client, 'exit')
  if (code !== 0 || result === undefined) {
    sink.disconnect()
    throw new Error(`${variant.name}: the client exited with ${code} before reporting`)
  }
  sink.send({ cmd: 'report' })
  const [{ report }] = await once(sink, 'message')
  return { ...result, sink: report }
}

/** Honesty: every event delivered exactly once, no body over the limit, nothing failed. */
function checkDelivery({ events, delivered, failed, sink: received }) {
  if (failed !== 0 || delivered !== events)
    return `the client reports ${delivered} delivered and ${failed} failed of ${events}`
  if (received.events !== events) return `the sink received ${received.events} events, expected ${events}`
  if (received.uniqueMessageIds !== events)
    return `the sink received ${received.uniqueMessageIds} distinct messageIds (duplicates)`
  if (received.maxBodyBytes > 500_000) return `a request body of ${received.maxBodyBytes} bytes, over 500,000`
  if (received.notBatches > 0) return `${received.notBatches} requests were not batches`
  return undefined
}

/**
 * Medians over the valid runs; each ratio is the median of the per-run ratios to the baseline
 * of the same run, which cancels most of a shared machine's drift between runs.
 */
function printSummary() {
  const baseline = results.get('baseline')
  const NAME = 25
  const CELL = 19
  console.log(`\nmedians${' '.repeat(NAME - 7)}${FIGURES.map(({ title }) => pad(title, CELL)).join('')}`)
  for (const { name } of VARIANTS) {
    const runs = results.get(name)
    const valid = runs.filter((result) => result !== undefined)
    if (valid.length === 0) continue
    const target = TARGETS[name] ?? {}
    const cells = FIGURES.map(({ pick, digits, target: key, atLeast, noRatio }) => {
      const value = median(valid.map(pick))
      const ratios = runs.flatMap((result, run) =>
        result === undefined || baseline[run] === undefined ? [] : [pick(result) / pick(baseline[run])],
      )
      if (name === 'baseline' || noRatio || ratios.length === 0) return pad(fmt(value, digits), CELL)
      const ratio = median(ratios)
      const limit = key === undefined ? undefined : target[key]
      const verdict = limit === undefined ? '' : (atLeast ? ratio >= limit : ratio <= limit) ? ' ok' : ' MISS'
      return pad(`${fmt(value, digits)} ${ratio.toFixed(2)}x${verdict}`, CELL)
    })
    console.log(pad(name, NAME) + cells.join(''))
  }
  printGzipCost()
  console.log(
    '\ntargets (ratio to baseline): flushAt 100: CPU <= 1.3x, events/s >= 0.8x, RSS <= 1.3x; defaults: CPU <= 2x;' +
      '\ncaller cost <= 1.3x of the baseline\'s build+stringify ("call": wall time inside the calls; "call CPU": process CPU during them)',
  )
}

/** With --gzip: gzip: true against gzip: false (both flushAt 100), as medians of per-run ratios. */
function printGzipCost() {
  const plain = results.get('sdk (flushAt 100)')
  const gzip = results.get('sdk (flushAt 100) gzip')
  if (gzip === undefined) return
  const ratio = (pick) =>
    median(gzip.flatMap((result, run) => (result && plain[run] ? [pick(result) / pick(plain[run])] : []))).toFixed(2)
  console.log(
    `\ngzip: true vs gzip: false (flushAt 100, same runs): client CPU ${ratio((r) => r.cpuSeconds)}x, ` +
      `events/s ${ratio((r) => r.eventsPerSecond)}x, bytes on the wire ${ratio((r) => r.sink.bodyBytes)}x`,
  )
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b)
  const half = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[half] : (sorted[half - 1] + sorted[half]) / 2
}

function fmt(value, digits) {
  return value.toLocaleString('en', { minimumFractionDigits: digits, maximumFractionDigits: digits })
}

function pad(text, width) {
  return text.padEnd(width)
}
