// npm run bench:relay-fault — a receiver outage, as an operator meets it: the relay (its own
// process, SQLite file) takes BENCH_MESSAGES messages from the SDK while its one webhook receiver
// answers 503 for BENCH_OUTAGE_MS, then 200. Prints the requests the failing receiver got during
// the outage, the relay's CPU meanwhile, the time from the receiver's return to the last message
// delivered, and whether every message arrived. Figures are for one machine, never asserted.
//
//   BENCH_MESSAGES=10000 BENCH_OUTAGE_MS=120000 npm run bench:relay-fault
//   BENCH_OUTAGE_MS=20000 npm run bench:relay-fault        (a quick run)
//   BENCH_PROFILE=<dir> writes a CPU profile of the relay there (see bench/profile-summary.mjs)
import { fork } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import http from 'node:http'
import { availableParallelism, tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { Analytics } from '../dist/index.js'

const N = Number(process.env.BENCH_MESSAGES ?? 10_000)
const OUTAGE_MS = Number(process.env.BENCH_OUTAGE_MS ?? 120_000)
const WRITE_KEY = 'bench-write-key'
const dir = mkdtempSync(join(tmpdir(), 'tracklet-fault-'))

// The receiver: 503 while down, 200 once up; counts requests by phase and each message's arrival.
const receiver = {
  up: false,
  requestsWhileDown: 0,
  requestsWhileUp: 0,
  delivered: new Set(),
  lastDeliveryAt: 0,
  /** When the first request after the return came (the probe that closes the circuit). */
  firstAnsweredAt: 0,
  done: undefined,
}
const allDelivered = new Promise((resolve) => (receiver.done = resolve))
const server = http.createServer((req, res) => {
  const chunks = []
  req.on('data', (c) => chunks.push(c))
  req.on('end', () => {
    if (!receiver.up) {
      receiver.requestsWhileDown++
      res.writeHead(503).end()
      return
    }
    receiver.requestsWhileUp++
    receiver.firstAnsweredAt ||= performance.now()
    res.writeHead(200).end()
    const { messageId } = JSON.parse(Buffer.concat(chunks).toString('utf8'))
    if (receiver.delivered.has(messageId)) return
    receiver.delivered.add(messageId)
    receiver.lastDeliveryAt = performance.now()
    if (receiver.delivered.size === N) receiver.done()
  })
})
server.keepAliveTimeout = 30_000
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
const receiverUrl = `http://127.0.0.1:${server.address().port}/hook`

// The relay, with its defaults (breaker and per-URL limit included).
const child = fork(
  new URL('./relay-server.mjs', import.meta.url),
  [
    JSON.stringify({
      port: 0,
      database: join(dir, 'relay.db'),
      allowPrivateNetworks: true,
      sources: [
        { name: 'bench', writeKey: WRITE_KEY, destinations: { Webhooks: { webhooks: [{ url: receiverUrl }] } } },
      ],
    }),
  ],
  { execArgv: process.env.BENCH_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE}`] : [] },
)
const reply = () => new Promise((resolve) => child.once('message', resolve))
const { url: relayUrl } = await reply()
const relayCpuMs = async () => {
  child.send('usage')
  return (await reply()).cpuMs
}

// The outage starts now; the messages arrive during it, as fast as the SDK sends them.
const outageStarted = performance.now()
const cpuAtStart = await relayCpuMs()
const analytics = new Analytics(WRITE_KEY, { endpoint: relayUrl, flushAt: 100, maxQueueSize: N })
let failed = 0
for (let i = 0; i < N; i++) {
  analytics.track(
    { userId: `user-${i % 500}`, event: 'Order Completed', messageId: `fault-${i}`, properties: { i } },
    (error) => {
      if (error) failed++
    },
  )
  if (i % 1000 === 999) await new Promise((resolve) => setImmediate(resolve))
}
await analytics.closeAndFlush()
const ingestedAfterMs = performance.now() - outageStarted
const cpuAfterIngest = await relayCpuMs()
const requestsAfterIngest = receiver.requestsWhileDown

await sleep(Math.max(0, OUTAGE_MS - (performance.now() - outageStarted)))
const cpuAtReturn = await relayCpuMs()
const requestsDuringOutage = receiver.requestsWhileDown
receiver.up = true
const returnedAt = performance.now()

// Wait for every message (or give up after 10 minutes and say so).
const timedOut = await Promise.race([allDelivered.then(() => false), sleep(600_000).then(() => true)])
const drainMs = receiver.lastDeliveryAt - returnedAt
const cpuAtEnd = await relayCpuMs()
child.send('stop')
await reply()
server.closeAllConnections()
server.close()
rmSync(dir, { recursive: true, force: true })

const outageS = (returnedAt - outageStarted) / 1000
const idleS = outageS - ingestedAfterMs / 1000
const pctCore = (ms, seconds) => `${((ms / 1000 / seconds) * 100).toFixed(1)} %`
console.log(
  `tracklet relay fault bench: ${N.toLocaleString('en-US')} messages, receiver down (503) for ${outageS.toFixed(0)} s then up; Node ${process.version}, ${availableParallelism()} CPUs`,
)
console.log(
  `  outage     requests to the failing receiver: ${requestsDuringOutage} (${requestsAfterIngest} by the time all ${N.toLocaleString('en-US')} were acknowledged, ${(ingestedAfterMs / 1000).toFixed(1)} s in${failed ? `; ${failed} not acknowledged` : ''})`,
)
console.log(
  `  relay CPU  during the outage: ${((cpuAtReturn - cpuAtStart) / 1000).toFixed(2)} s (${pctCore(cpuAtReturn - cpuAtStart, outageS)} of a core); after ingest, while waiting: ${((cpuAtReturn - cpuAfterIngest) / 1000).toFixed(2)} s (${pctCore(cpuAtReturn - cpuAfterIngest, idleS)})`,
)
console.log(
  `  recovery   receiver back → last message delivered: ${timedOut ? 'NOT DONE after 600 s' : `${(drainMs / 1000).toFixed(2)} s`} (the probe after ${((receiver.firstAnsweredAt - returnedAt) / 1000).toFixed(2)} s, then the backlog in ${((receiver.lastDeliveryAt - receiver.firstAnsweredAt) / 1000).toFixed(2)} s); relay CPU ${((cpuAtEnd - cpuAtReturn) / 1000).toFixed(2)} s`,
)
console.log(
  `  messages   delivered ${receiver.delivered.size.toLocaleString('en-US')} of ${N.toLocaleString('en-US')} (${N - receiver.delivered.size} lost); requests after the return ${receiver.requestsWhileUp.toLocaleString('en-US')} (${receiver.requestsWhileUp - receiver.delivered.size} repeats)`,
)
process.exit(timedOut || receiver.delivered.size !== N ? 1 : 0)
