// node bench/ordering.mjs — ordered delivery per user (docs/delivery-controls.md, "Ordering"), after npm run build:
// 1. Inversions: two relays on one PostgreSQL (then one relay on SQLite), `ordered: true`, a
//    receiver that answers 500 to the first request of one message in 20 (so those are retried
//    after a back-off) and 200 to the rest; N messages of U users, sent in batches alternately to
//    the relays, one batch after the other (the order received). An inversion: a later message of a
//    user arriving before an earlier one's last arrival. Expected: 0.
// 2. Cost: one relay delivers N messages of U users to a receiver that answers at once, ordered and
//    not, alternately (A B A B) in the same run: the time per delivery ordered over not.
// 3. Claims: the claim statement alone, on a store (no relay), with H deliveries of one user held
//    behind its first (pending, not due) beside 100 unordered ones: the time of a claim of 128
//    (then given back), H = 0, 1,000 and 10,000, SQLite and PostgreSQL; then again once the held
//    line has taken its head's retry time (what each relay does every ORDER_LINES_EVERY_MS).
//   BENCH_N=2000 BENCH_USERS=97 BENCH_ROUNDS=4 node bench/ordering.mjs
import http from 'node:http'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { request } from 'undici'
import { createRelay } from '../dist/relay/index.js'
import { startPostgresServer } from '../test/support/postgres-server.mjs'
import { importSource } from './load-source.mjs'

const N = Number(process.env.BENCH_N ?? 2000)
const USERS = Number(process.env.BENCH_USERS ?? 97)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 4)
// BENCH_PARTS=cost (or inversions) runs that part alone.
const PARTS = process.env.BENCH_PARTS ?? 'inversions,cost,claims'
const ADMIN = 'bench-admin-token-xxxxxxxx'
const auth = `Basic ${Buffer.from('wk:').toString('base64')}`

// Each request's message id, in arrival order; which ids failed once already.
const arrivals = []
const failedOnce = new Set()
let failing = false
const receiver = http.createServer((req, res) => {
  const chunks = []
  req.on('data', (chunk) => chunks.push(chunk))
  req.on('end', () => {
    const id = JSON.parse(Buffer.concat(chunks).toString('utf8')).messageId
    arrivals.push(id)
    const serial = Number(id.split('-')[1])
    if (failing && serial % 20 === 7 && !failedOnce.has(id)) {
      failedOnce.add(id)
      res.writeHead(500).end()
    } else res.writeHead(200).end()
  })
})
await new Promise((resolve) => receiver.listen(0, '127.0.0.1', resolve))
const hook = `http://127.0.0.1:${receiver.address().port}/hook`

function relayOn(database, ordered) {
  return createRelay({
    port: 0,
    database,
    adminToken: ADMIN,
    allowPrivateNetworks: true,
    logLevel: 'error',
    concurrency: 64,
    sources: [{ name: 'web', writeKey: 'wk', destinations: { Webhooks: { webhooks: [{ url: hook }], ordered } } }],
  })
}

// The messages sent, in the order sent: [id, user].
let sent = []
let serial = 0
async function send(relays, count) {
  for (let batchNo = 0, done = 0; done < count; batchNo++, done += 100) {
    const batch = Array.from({ length: Math.min(100, count - done) }, () => {
      const user = `u${serial % USERS}`
      const id = `m-${serial++}`
      sent.push([id, user])
      return { type: 'track', event: 'Bench', userId: user, messageId: id }
    })
    const relay = relays[batchNo % relays.length]
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

// Every distinct message arrived, and (at-least-once) its last answer was a 200.
const allArrived = () => new Set(arrivals).size >= sent.length

function inversions() {
  const first = new Map()
  const last = new Map()
  arrivals.forEach((id, index) => {
    if (!first.has(id)) first.set(id, index)
    last.set(id, index)
  })
  const byUser = new Map()
  for (const [id, user] of sent) byUser.set(user, [...(byUser.get(user) ?? []), id])
  let count = 0
  for (const ids of byUser.values()) {
    for (let j = 1; j < ids.length; j++) {
      for (let i = 0; i < j; i++) if (last.get(ids[i]) > first.get(ids[j])) count++
    }
  }
  return count
}

const server = await startPostgresServer()
const dir = mkdtempSync(join(tmpdir(), 'tracklet-bench-ordering-'))
try {
  if (PARTS.includes('inversions')) {
    for (const kind of ['postgres', 'sqlite']) {
      const database = kind === 'sqlite' ? join(dir, 'inversions.db') : await server.createDatabase()
      const relays = [await relayOn(database, true)]
      if (kind === 'postgres') relays.push(await relayOn(database, true))
      arrivals.length = 0
      sent = []
      failing = true
      await send(relays, N)
      await until(allArrived)
      // The last retries' answers are in: every failed message arrived twice.
      await until(() => arrivals.length >= sent.length + failedOnce.size)
      failing = false
      console.log(
        `${kind}, ${relays.length} relay(s), ${N} messages of ${USERS} users, ${failedOnce.size} answered 500 once: ${inversions()} inversions`,
      )
      failedOnce.clear()
      for (const relay of relays) await relay.close()
    }
  }
  for (const kind of PARTS.includes('cost') ? ['sqlite', 'postgres'] : []) {
    const ratios = []
    for (let round = 0; round < ROUNDS; round++) {
      const times = {}
      for (const ordered of round % 2 === 0 ? [false, true] : [true, false]) {
        const database = kind === 'sqlite' ? join(dir, `${round}-${ordered}.db`) : await server.createDatabase()
        const relay = await relayOn(database, ordered)
        arrivals.length = 0
        sent = []
        const began = performance.now()
        await send([relay], N)
        await until(() => arrivals.length >= N)
        times[ordered] = (performance.now() - began) / N
        await relay.close()
      }
      ratios.push(times.true / times.false)
      console.log(
        `${kind} round ${round + 1}: ${(times.false * 1000).toFixed(0)} µs per delivery not ordered, ${(times.true * 1000).toFixed(0)} µs ordered`,
      )
    }
    ratios.sort((a, b) => a - b)
    const median =
      ratios.length % 2 === 1 ? ratios[(ROUNDS - 1) / 2] : (ratios[ROUNDS / 2 - 1] + ratios[ROUNDS / 2]) / 2
    console.log(`${kind}: ordered / not ordered time per delivery, median of ${ROUNDS}: ${median.toFixed(2)}`)
  }
  if (PARTS.includes('claims')) {
    const { openSqliteStore, openPostgresStore, orderKeyOf } = await importSource(`
      export { openSqliteStore } from './src/relay/store/sqlite/sqlite-store'
      export { openPostgresStore } from './src/relay/store/postgres/postgres-store'
      export { orderKeyOf } from './src/relay/store/ordering/order-key'`)
    const row = (messageId, userId, ordered) => {
      const message = { type: 'track', event: 'E', userId, messageId }
      const json = JSON.stringify(message)
      const orderKey = ordered ? orderKeyOf('web', 'Webhooks', message) : undefined
      return { source: 'web', destination: 'Webhooks', messageId, type: 'track', json, orderKey }
    }
    for (const kind of ['sqlite', 'postgres']) {
      for (const held of [0, 1000, 10_000]) {
        const database = kind === 'sqlite' ? join(dir, `claims-${held}.db`) : await server.createDatabase()
        const store = kind === 'sqlite' ? await openSqliteStore(database) : await openPostgresStore(database)
        // The user's first, claimed and retried later: it holds the rest.
        await store.enqueue([row('head', 'held-user', true)])
        const [head] = await store.claim({ source: 'web', limit: 1, owner: 'bench', leaseMs: 60_000 })
        await store.record([
          {
            id: head.id,
            at: Date.now(),
            requests: [],
            next: { status: 'pending', nextAttemptAt: Date.now() + 3_600_000, error: 'x' },
          },
        ])
        for (let i = 0; i < held; i += 500) {
          await store.enqueue(
            Array.from({ length: Math.min(500, held - i) }, (_, j) => row(`h-${i + j}`, 'held-user', true)),
          )
        }
        await store.enqueue(Array.from({ length: 100 }, (_, j) => row(`free-${j}`, `u${j}`, false)))
        // The median of 20 claims of the 100 free ones, each given back.
        const medianClaim = async () => {
          const times = []
          for (let r = 0; r < 20; r++) {
            const began = performance.now()
            const claimed = await store.claim({ source: 'web', limit: 128, owner: 'bench', leaseMs: 60_000 })
            times.push(performance.now() - began)
            if (claimed.length !== 100) throw new Error(`claimed ${claimed.length}, not the 100 free ones`)
            await store.release(
              'bench',
              claimed.map((d) => d.id),
            )
          }
          return times.sort((a, b) => a - b)[10].toFixed(2)
        }
        const before = await medianClaim()
        // What each relay does every ORDER_LINES_EVERY_MS: the held line takes its head's retry time.
        const began = performance.now()
        await store.ordering.mirrorHeads()
        const mirrorMs = (performance.now() - began).toFixed(1)
        const again = performance.now()
        await store.ordering.mirrorHeads()
        const idleMs = (performance.now() - again).toFixed(1)
        const after = await medianClaim()
        console.log(
          `${kind}: a claim of 128 beside ${held} held deliveries: ${before} ms, then ${after} ms once the line ` +
            `waits for its head's retry (moved in ${mirrorMs} ms, then ${idleMs} ms with nothing to move; medians of 20)`,
        )
        await store.close()
      }
    }
  }
} finally {
  receiver.close()
  receiver.closeAllConnections()
  await server.stop()
  rmSync(dir, { recursive: true, force: true })
}
