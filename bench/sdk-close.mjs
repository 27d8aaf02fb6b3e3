// How far closeAndFlush({ timeout }) overruns its deadline with a large backlog and the endpoint
// down (issue 12 point 4):  npm run build && node bench/sdk-close.mjs [--events=100000] [--timeout=3000] [--runs=3]
//
// Queues the events with a callback each against an endpoint that refuses connections (a port
// just closed), calls closeAndFlush({ timeout }), and prints how long after the deadline it
// resolved, and whether every callback was called exactly once with ERR_CLOSED or ERR_DELIVERY.
// --quiet: calls without callbacks and no 'error' listener (counted through stats() instead).
// Each run in a fresh process. Not a test: nothing is asserted; a run that lost or repeated a
// callback is reported as invalid and the process exits non-zero.
import { fork } from 'node:child_process'
import { once } from 'node:events'
import { createServer } from 'node:net'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'

const { values } = parseArgs({
  options: {
    events: { type: 'string', default: '100000' },
    timeout: { type: 'string', default: '3000' },
    runs: { type: 'string', default: '3' },
    child: { type: 'boolean', default: false },
    // Fire-and-forget calls: no callbacks, no 'error' listener (counted through stats()).
    quiet: { type: 'boolean', default: false },
  },
})
const EVENTS = Number(values.events)
const TIMEOUT = Number(values.timeout)

if (values.child) await child()
else await parent()

async function parent() {
  console.log(
    `${EVENTS.toLocaleString('en')} events queued, endpoint down, closeAndFlush({ timeout: ${TIMEOUT} }), Node ${process.version}\n`,
  )
  const overruns = []
  let invalid = 0
  for (let run = 0; run < Number(values.runs); run++) {
    const proc = fork(fileURLToPath(import.meta.url), [
      '--child',
      `--events=${EVENTS}`,
      `--timeout=${TIMEOUT}`,
      ...(values.quiet ? ['--quiet'] : []),
    ])
    let result
    proc.on('message', (message) => (result = message))
    await once(proc, 'exit')
    const problem = result === undefined ? 'no report' : result.problem
    console.log(
      `run ${run + 1}  resolved ${result?.elapsedMs.toFixed(1)} ms after the call: overrun ${result?.overrunMs.toFixed(1)} ms; ` +
        `callbacks ${JSON.stringify(result?.codes)}${problem ? `  INVALID: ${problem}` : ''}`,
    )
    if (problem) invalid++
    else overruns.push(result.overrunMs)
  }
  overruns.sort((a, b) => a - b)
  if (overruns.length > 0)
    console.log(
      `\nmedian overrun ${overruns[Math.floor(overruns.length / 2)].toFixed(1)} ms (max ${overruns.at(-1).toFixed(1)} ms)`,
    )
  process.exitCode = invalid === 0 ? 0 : 1
}

async function child() {
  const { Analytics } = await import('tracklet')
  // A port that was open a moment ago and is closed now: connections are refused at once.
  const server = createServer().listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address()
  server.close()
  await once(server, 'close')

  const analytics = new Analytics('wk_bench', { endpoint: `http://127.0.0.1:${port}` })
  const calls = new Uint8Array(EVENTS)
  const codes = {}
  for (let i = 0; i < EVENTS; i++) {
    const fields = { userId: `u${i}`, event: 'Bench', properties: { i, plan: 'pro' } }
    if (values.quiet) {
      analytics.track(fields)
      continue
    }
    analytics.track(fields, (error) => {
      calls[i]++
      const code = error?.code ?? 'delivered'
      codes[code] = (codes[code] ?? 0) + 1
    })
  }
  // Let the first batches meet the refused endpoint and start backing off, as in an outage.
  await new Promise((resolve) => setTimeout(resolve, 200))
  const started = performance.now()
  await analytics.closeAndFlush({ timeout: TIMEOUT })
  const elapsedMs = performance.now() - started
  const wrong = calls.findIndex((count) => count !== 1)
  const { failed, delivered } = analytics.stats()
  if (values.quiet) codes.failed = failed
  const problem = values.quiet
    ? failed + delivered === EVENTS
      ? undefined
      : `stats count ${failed} failed and ${delivered} delivered`
    : wrong === -1
      ? undefined
      : `callback ${wrong} was called ${calls[wrong]} times`
  const report = { elapsedMs, overrunMs: elapsedMs - TIMEOUT, codes, problem }
  if (process.send) process.send(report)
  else console.log(report) // run alone (--child), e.g. under --cpu-prof
}
