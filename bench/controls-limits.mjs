// node bench/controls-limits.mjs — the per-URL limits (docs/delivery-controls.md), after npm run build:
// 1. Precision: two relays on one PostgreSQL send to one receiver whose URL has ratePerSecond R;
//    the receiver counts what arrives over a minute (after the first second's burst) against R × 60.
//    Then maxInFlight M: the most requests in flight the receiver ever saw, against M.
// 2. Cost: one relay delivers N messages to a receiver that answers at once, with a limit that never
//    binds (ratePerSecond 10,000, maxInFlight 1,000) and without one, alternately, in the same run:
//    the time per delivery with the limit over the time without, SQLite and PostgreSQL.
//   BENCH_RATE=50 BENCH_SECONDS=60 BENCH_N=2000 BENCH_ROUNDS=3 node bench/controls-limits.mjs
import http from 'node:http'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { request } from 'undici'
import { createRelay } from '../dist/relay/index.js'
import { startPostgresServer } from '../test/support/postgres-server.mjs'

const RATE = Number(process.env.BENCH_RATE ?? 50)
const SECONDS = Number(process.env.BENCH_SECONDS ?? 60)
const N = Number(process.env.BENCH_N ?? 2000)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
// BENCH_PARTS=cost (or precision) runs that part alone.
const PARTS = process.env.BENCH_PARTS ?? 'precision,cost'
const MAX_IN_FLIGHT = 4
const ADMIN = 'bench-admin-token-xxxxxxxx'
const auth = `Basic ${Buffer.from('wk:').toString('base64')}`

const arrivals = []
let inFlight = 0
let mostInFlight = 0
let delay = 0
const receiver = http.createServer((req, res) => {
  req.resume()
  req.on('end', () => {
    arrivals.push(performance.now())
    inFlight++
    mostInFlight = Math.max(mostInFlight, inFlight)
    const answer = () => {
      inFlight--
      res.writeHead(200).end()
    }
    if (delay > 0) setTimeout(answer, delay)
    else answer()
  })
})
await new Promise((resolve) => receiver.listen(0, '127.0.0.1', resolve))
const hook = `http://127.0.0.1:${receiver.address().port}/hook`

function relayOn(database, limits) {
  return createRelay({
    port: 0,
    database,
    adminToken: ADMIN,
    allowPrivateNetworks: true,
    logLevel: 'error',
    concurrency: 64,
    sources: [{ name: 'web', writeKey: 'wk', destinations: { Webhooks: { webhooks: [{ url: hook, ...limits }] } } }],
  })
}

let serial = 0
async function send(relay, count) {
  for (let sent = 0; sent < count; sent += 100) {
    const batch = Array.from({ length: Math.min(100, count - sent) }, () => ({
      type: 'track',
      event: 'Bench',
      userId: `u${serial % 97}`,
      messageId: `m-${serial++}`,
    }))
    const response = await request(`${relay.url}/v1/batch`, {
      method: 'POST',
      headers: { authorization: auth, 'content-type': 'application/json' },
      body: JSON.stringify({ batch }),
    })
    if (response.statusCode !== 200) throw new Error(`ingest answered ${response.statusCode}`)
    await response.body.dump()
  }
}

async function until(check) {
  while (!check()) await new Promise((resolve) => setTimeout(resolve, 20))
}

const server = await startPostgresServer()
const dir = mkdtempSync(join(tmpdir(), 'tracklet-bench-controls-'))
try {
  // 1. Precision across two relays.
  if (PARTS.includes('precision')) {
    const database = await server.createDatabase()
    const relays = [await relayOn(database, { ratePerSecond: RATE }), await relayOn(database, { ratePerSecond: RATE })]
    const total = RATE * (SECONDS + 2)
    arrivals.length = 0
    await Promise.all(relays.map((relay) => send(relay, Math.ceil(total / 2))))
    await until(() => arrivals.length > RATE * 1.5)
    const start = arrivals[Math.ceil(RATE * 1.2)]
    await until(() => arrivals.length > 0 && arrivals.at(-1) - start >= SECONDS * 1000)
    const inWindow = arrivals.filter((at) => at >= start && at < start + SECONDS * 1000).length
    console.log(
      `rate ${RATE}/s over ${SECONDS} s, two relays on one PostgreSQL: ${inWindow} requests against ${RATE * SECONDS} allowed (${((inWindow / (RATE * SECONDS) - 1) * 100).toFixed(2)} %)`,
    )
    for (const relay of relays) await relay.close()
  }
  if (PARTS.includes('precision')) {
    const database = await server.createDatabase()
    const relays = [
      await relayOn(database, { maxInFlight: MAX_IN_FLIGHT }),
      await relayOn(database, { maxInFlight: MAX_IN_FLIGHT }),
    ]
    arrivals.length = 0
    mostInFlight = 0
    delay = 20
    await Promise.all(relays.map((relay) => send(relay, 400)))
    await until(() => arrivals.length >= 800)
    delay = 0
    console.log(
      `maxInFlight ${MAX_IN_FLIGHT}, two relays on one PostgreSQL, 800 requests of 20 ms: at most ${mostInFlight} in flight`,
    )
    for (const relay of relays) await relay.close()
  }
  // 2. Cost per delivery, limited (never binding) against unlimited, alternating.
  for (const kind of PARTS.includes('cost') ? ['sqlite', 'postgres'] : []) {
    const ratios = []
    for (let round = 0; round < ROUNDS; round++) {
      const times = {}
      for (const limited of round % 2 === 0 ? [false, true] : [true, false]) {
        const database = kind === 'sqlite' ? join(dir, `${round}-${limited}.db`) : await server.createDatabase()
        const relay = await relayOn(database, limited ? { ratePerSecond: 10_000, maxInFlight: 1000 } : {})
        arrivals.length = 0
        const began = performance.now()
        await send(relay, N)
        await until(() => arrivals.length >= N)
        times[limited] = (performance.now() - began) / N
        await relay.close()
      }
      ratios.push(times.true / times.false)
      console.log(
        `${kind} round ${round + 1}: ${(times.false * 1000).toFixed(0)} µs per delivery unlimited, ${(times.true * 1000).toFixed(0)} µs limited`,
      )
    }
    ratios.sort((a, b) => a - b)
    console.log(
      `${kind}: limited / unlimited time per delivery, median of ${ROUNDS}: ${ratios[Math.floor(ROUNDS / 2)].toFixed(2)}`,
    )
  }
} finally {
  receiver.close()
  receiver.closeAllConnections()
  await server.stop()
  rmSync(dir, { recursive: true, force: true })
}
