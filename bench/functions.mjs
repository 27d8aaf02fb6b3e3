// Functions' cost (docs/functions.md): delivery with a trivial onTrack (adds one property) against
// the same delivery without a function, A B A B in one process, each round a fresh relay on an
// in-memory store. Reports each round's throughput ratio and the relay process's CPU per delivery
// (every thread: the function's worker included), and the difference: what the function costs, on
// the relay's own thread and on the others (Linux: read from /proc, in steps of 10 ms).
// Then an endless-loop function on a second source: the first source's delivery latency while it
// loops, against the same run without it. Run with `npm run build` first: node bench/functions.mjs
import { readdirSync, readFileSync } from 'node:fs'
import { createServer } from 'node:http'
import { request } from 'undici'
import { createRelay } from '../dist/relay/index.js'

const MESSAGES = Number(process.env.MESSAGES ?? 3000)
const ROUNDS = Number(process.env.ROUNDS ?? 3)
const BATCH = 100
const TRIVIAL = 'function onTrack(event) { event.properties.enriched = true; return event }'

function sink() {
  const arrivals = []
  const server = createServer((req, res) => {
    let body = ''
    req.on('data', (c) => (body += c))
    req.on('end', () => {
      arrivals.push({ at: performance.now(), body: JSON.parse(body) })
      res.end('{}')
    })
  })
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({ server, arrivals, url: `http://127.0.0.1:${server.address().port}/hook` }),
    ),
  )
}

const auth = (key) => `Basic ${Buffer.from(`${key}:`).toString('base64')}`
const source = (name, url, code) => ({
  name,
  writeKey: `wk-${name}`,
  destinations: { Webhooks: { webhooks: [{ url }], ...(code === undefined ? {} : { function: { code } }) } },
})

async function ingest(relay, key, messages) {
  for (let i = 0; i < messages.length; i += BATCH) {
    const response = await request(`${relay.url}/v1/batch`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: auth(key) },
      body: JSON.stringify({ batch: messages.slice(i, i + BATCH) }),
    })
    await response.body.dump()
  }
}

const track = (i, tag) => ({
  type: 'track',
  userId: `u${i}`,
  event: 'Bench',
  messageId: `${tag}-${i}`,
  properties: { i, sentAt: performance.now() },
})

// Each thread's CPU seconds so far, by thread id (Linux's /proc; empty elsewhere): the relay's own
// thread against the others (the function's worker, and V8's and libuv's helpers).
function threadCpu() {
  const seconds = new Map()
  try {
    for (const tid of readdirSync('/proc/self/task')) {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8')
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      seconds.set(Number(tid), (Number(fields[11]) + Number(fields[12])) / 100)
    }
  } catch {}
  return seconds
}

function perThread(before, after) {
  let main = 0
  let others = 0
  for (const [tid, seconds] of after) {
    const used = seconds - (before.get(tid) ?? 0)
    if (tid === process.pid) main += used
    else others += used
  }
  return { mainUs: (main * 1e6) / MESSAGES, othersUs: (others * 1e6) / MESSAGES }
}

async function until(check) {
  while (!check()) await new Promise((r) => setTimeout(r, 2))
}

async function throughput(withFunction) {
  const { server, arrivals, url } = await sink()
  const relay = await createRelay({
    port: 0,
    database: ':memory:',
    allowPrivateNetworks: true,
    logLevel: 'error',
    sources: [source('web', url, withFunction ? TRIVIAL : undefined)],
  })
  // Warm-up: the worker thread starts and the code paths get compiled.
  await ingest(
    relay,
    'wk-web',
    Array.from({ length: 200 }, (_, i) => track(i, 'warm')),
  )
  await until(() => arrivals.length >= 200)
  arrivals.length = 0
  const messages = Array.from({ length: MESSAGES }, (_, i) => track(i, 'm'))
  const threads = threadCpu()
  const cpu = process.cpuUsage()
  const started = performance.now()
  await ingest(relay, 'wk-web', messages)
  await until(() => arrivals.length >= MESSAGES)
  const ms = performance.now() - started
  const used = process.cpuUsage(cpu)
  const split = perThread(threads, threadCpu())
  if (withFunction && arrivals[0].body.properties.enriched !== true) throw new Error('the function did not run')
  await relay.close()
  server.close()
  return { perSecond: (MESSAGES / ms) * 1000, cpuUsPerDelivery: (used.user + used.system) / MESSAGES, ...split }
}

async function latencyBeside(looping) {
  const { server, arrivals, url } = await sink()
  // The same receiver: a call runs before its delivery takes a slot of the URL (maxInFlightPerUrl),
  // so a function looping until functionTimeout must not slow the other source's deliveries there.
  const relay = await createRelay({
    port: 0,
    database: ':memory:',
    allowPrivateNetworks: true,
    logLevel: 'error',
    functionTimeout: 1000,
    sources: [source('web', url), source('loop', url, 'function onTrack() { for (;;) {} }')],
  })
  let stop = false
  const loops = looping
    ? (async () => {
        for (let i = 0; !stop; i++) {
          await ingest(relay, 'wk-loop', [track(i, 'loop')])
          await new Promise((r) => setTimeout(r, 100))
        }
      })()
    : Promise.resolve()
  const latencies = []
  for (let i = 0; i < 200; i++) {
    const sent = performance.now()
    await ingest(relay, 'wk-web', [track(i, 'web')])
    await until(() => arrivals.some((a) => a.body.messageId === `web-${i}`))
    latencies.push(performance.now() - sent)
    await new Promise((r) => setTimeout(r, 5))
  }
  stop = true
  await loops
  await relay.close()
  server.close()
  latencies.sort((a, b) => a - b)
  return { p50: latencies[100], p95: latencies[190] }
}

const rounds = []
// LOOP_ONLY=1 runs the endless-loop rounds only; NO_LOOP=1 skips them. PROFILE_WITH=1 runs the
// function's rounds alone (for `node --cpu-prof`: the profiles then hold the function's cost only).
const LOOP_ONLY = process.env.LOOP_ONLY === '1'
const PROFILE_WITH = process.env.PROFILE_WITH === '1'
if (PROFILE_WITH) {
  for (let round = 0; round < ROUNDS; round++) {
    const withFn = await throughput(true)
    console.log(`with: ${withFn.perSecond.toFixed(0)}/s ${withFn.cpuUsPerDelivery.toFixed(1)} µs CPU per delivery`)
  }
  process.exit(0)
}
for (let round = 0; round < (LOOP_ONLY ? 0 : ROUNDS); round++) {
  const without = await throughput(false)
  const withFn = await throughput(true)
  rounds.push({ without, withFn })
  console.log(
    `round ${round + 1}: without ${without.perSecond.toFixed(0)}/s ${without.cpuUsPerDelivery.toFixed(1)} µs CPU; with ${withFn.perSecond.toFixed(0)}/s ${withFn.cpuUsPerDelivery.toFixed(1)} µs CPU; ratio ${(withFn.perSecond / without.perSecond).toFixed(2)}×, function cost ${(withFn.cpuUsPerDelivery - without.cpuUsPerDelivery).toFixed(1)} µs CPU per delivery`,
  )
}
const median = (xs) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)]
if (!LOOP_ONLY)
  console.log(
    `median: throughput ratio ${median(rounds.map((r) => r.withFn.perSecond / r.without.perSecond)).toFixed(2)}×, function cost ${median(rounds.map((r) => r.withFn.cpuUsPerDelivery - r.without.cpuUsPerDelivery)).toFixed(1)} µs CPU per delivery (relay's thread ${median(rounds.map((r) => r.withFn.mainUs - r.without.mainUs)).toFixed(1)}, other threads ${median(rounds.map((r) => r.withFn.othersUs - r.without.othersUs)).toFixed(1)})`,
  )
for (let round = 0; round < (process.env.NO_LOOP === '1' ? 0 : 2); round++) {
  const quiet = await latencyBeside(false)
  const busy = await latencyBeside(true)
  console.log(
    `loop round ${round + 1}: other source's latency p50 ${quiet.p50.toFixed(1)} → ${busy.p50.toFixed(1)} ms, p95 ${quiet.p95.toFixed(1)} → ${busy.p95.toFixed(1)} ms while a function loops`,
  )
}
