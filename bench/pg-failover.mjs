// node bench/pg-failover.mjs (after npm run build) — what high availability costs on PostgreSQL,
// on this machine: a primary and a streaming standby (test/support/postgres-pair.mjs, durable: fsync on), a relay in
// its own process on the two-host URL (target_session_attrs=read-write), one webhook receiver.
//
// 1. The price of a synchronous standby: BENCH_MESSAGES messages ingested (batches of 100, 4 at a
//    time) and delivered, with the primary alone, with a standby not synchronous, and with a
//    synchronous one: ingest's messages per second, and WAL bytes per message on the primary
//    (ingest and delivery together).
// 2. A failover, BENCH_RUNS times: load going on, kill -9 of the primary, BENCH_GAP_MS later
//    `pg_ctl promote` of the (synchronous) standby. Time from the promotion to the first 2xx, the
//    503s meanwhile, duplicates (messages the receiver got more than once), and the acknowledged
//    messages lost (must be 0).
//
// Figures are for one machine, never asserted; run on a quiet machine for figures worth keeping.
//
//   npm run build && BENCH_MESSAGES=20000 BENCH_RUNS=3 node bench/pg-failover.mjs
import { fork } from 'node:child_process'
import http from 'node:http'
import { setTimeout as sleep } from 'node:timers/promises'
import { startPostgresPair } from '../test/support/postgres-pair.mjs'

const N = Number(process.env.BENCH_MESSAGES ?? 20_000)
const RUNS = Number(process.env.BENCH_RUNS ?? 3)
const GAP_MS = Number(process.env.BENCH_GAP_MS ?? 2000)
const WRITE_KEY = 'bench-write-key'
const AUTHORIZATION = `Basic ${Buffer.from(`${WRITE_KEY}:`).toString('base64')}`

/** A receiver counting each message id's arrivals. */
async function startReceiver() {
  const sent = new Map()
  const server = http.createServer((req, res) => {
    const chunks = []
    req.on('data', (chunk) => chunks.push(chunk))
    req.on('end', () => {
      const { messageId } = JSON.parse(Buffer.concat(chunks).toString('utf8'))
      sent.set(messageId, (sent.get(messageId) ?? 0) + 1)
      res.writeHead(200).end()
    })
  })
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${server.address().port}/hook`,
    sent,
    close: () => new Promise((resolve) => server.close(resolve) && server.closeAllConnections()),
  }
}

/** The relay in its own process (bench/relay-server.mjs) on `database`. */
async function startRelay(database, receiverUrl) {
  const child = fork(new URL('./relay-server.mjs', import.meta.url), [
    JSON.stringify({
      port: 0,
      database,
      allowPrivateNetworks: true,
      leaseTimeout: 2000,
      sources: [
        { name: 'bench', writeKey: WRITE_KEY, destinations: { Webhooks: { webhooks: [{ url: receiverUrl }] } } },
      ],
    }),
  ])
  const { url } = await new Promise((resolve) => child.once('message', resolve))
  return {
    url,
    stop: async () => {
      child.send('stop')
      await new Promise((resolve) => child.once('exit', resolve))
    },
  }
}

/** Posts one batch of `ids`; resolves with the status (0: the request failed). */
async function postBatch(relayUrl, ids) {
  const batch = ids.map((messageId) => ({ type: 'track', userId: 'u1', event: 'Bench', messageId }))
  try {
    const response = await fetch(`${relayUrl}/v1/batch`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: AUTHORIZATION },
      body: JSON.stringify({ batch }),
    })
    await response.arrayBuffer()
    return response.status
  } catch {
    return 0
  }
}

/** Posts `count` messages, 4 batches of 100 at a time; resolves with the ms it took. */
async function ingest(relayUrl, prefix, count) {
  let next = 0
  const start = performance.now()
  const sender = async () => {
    while (next < count) {
      const from = next
      next = Math.min(count, next + 100)
      const ids = Array.from({ length: next - from }, (_, i) => `${prefix}-${from + i}`)
      const status = await postBatch(relayUrl, ids)
      if (status !== 200) throw new Error(`ingest answered ${status}`)
    }
  }
  await Promise.all([sender(), sender(), sender(), sender()])
  return performance.now() - start
}

async function waitUntil(check, timeoutMs = 300_000) {
  const deadline = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('timed out')
    await sleep(50)
  }
}

async function walLsn(pair) {
  const [row] = await pair.query(pair.primary.url(), 'SELECT pg_current_wal_insert_lsn()::text AS lsn')
  return row.lsn
}

// 1. The price of a synchronous standby.
console.log(`ingest and delivery of ${N.toLocaleString('en')} messages, durable PostgreSQL (fsync on)`)
console.log('mode                       | ingest msg/s | WAL bytes/message')
for (const mode of ['primary alone', 'standby, not synchronous', 'synchronous standby']) {
  const pair = await startPostgresPair({ synchronous: mode === 'synchronous standby', durable: true })
  const receiver = await startReceiver()
  try {
    if (mode === 'primary alone') await pair.standby.kill()
    const database = await (mode === 'primary alone'
      ? pair.query(pair.primary.url(), 'CREATE DATABASE tracklet').then(() => pair.primary.url('tracklet'))
      : pair.createDatabase('tracklet'))
    const relay = await startRelay(database, receiver.url)
    await ingest(relay.url, 'warm', 200)
    await waitUntil(() => receiver.sent.size >= 200)
    const from = await walLsn(pair)
    const ms = await ingest(relay.url, 'm', N)
    await waitUntil(() => receiver.sent.size >= N + 200)
    const to = await walLsn(pair)
    const [{ bytes }] = await pair.query(pair.primary.url(), 'SELECT pg_wal_lsn_diff($1, $2)::bigint AS bytes', [
      to,
      from,
    ])
    console.log(
      `${mode.padEnd(26)} | ${Math.round(N / (ms / 1000))
        .toLocaleString('en')
        .padStart(12)} | ${Math.round(Number(bytes) / N)
        .toLocaleString('en')
        .padStart(17)}`,
    )
    await relay.stop()
  } finally {
    await receiver.close()
    await pair.stop()
  }
}

// 2. Failovers under load.
console.log(`\nfailover under load: kill -9 of the primary, promotion ${GAP_MS} ms later (synchronous standby)`)
console.log('run | 503s | ms from promotion to first 2xx | acknowledged | duplicates | lost')
for (let run = 1; run <= RUNS; run++) {
  const pair = await startPostgresPair({ synchronous: true, durable: true })
  const receiver = await startReceiver()
  try {
    const relay = await startRelay(await pair.createDatabase('tracklet'), receiver.url)
    const acknowledged = new Set()
    let refused = 0
    let firstAfterPromotion
    let promotedAt
    let next = 0
    let stopped = false
    const sender = async () => {
      while (!stopped) {
        const ids = Array.from({ length: 20 }, () => `f-${next++}`)
        const status = await postBatch(relay.url, ids)
        if (status === 200) {
          for (const id of ids) acknowledged.add(id)
          if (promotedAt !== undefined) firstAfterPromotion ??= performance.now() - promotedAt
        } else {
          refused++
          await sleep(20)
        }
      }
    }
    const senders = [sender(), sender(), sender(), sender()]
    await waitUntil(() => acknowledged.size >= 2000)
    await pair.primary.kill()
    await sleep(GAP_MS)
    await pair.standby.promote()
    promotedAt = performance.now()
    await waitUntil(() => firstAfterPromotion !== undefined, 60_000)
    const after = acknowledged.size
    await waitUntil(() => acknowledged.size >= after + 2000)
    stopped = true
    await Promise.all(senders)
    await waitUntil(() => [...acknowledged].every((id) => receiver.sent.has(id)), 120_000).catch(() => {})
    const lost = [...acknowledged].filter((id) => !receiver.sent.has(id)).length
    const duplicates = [...receiver.sent.values()].filter((count) => count > 1).length
    console.log(
      `${String(run).padStart(3)} | ${String(refused).padStart(4)} | ${Math.round(firstAfterPromotion)
        .toLocaleString('en')
        .padStart(
          31,
        )} | ${acknowledged.size.toLocaleString('en').padStart(12)} | ${String(duplicates).padStart(10)} | ${lost}`,
    )
    await relay.stop()
  } finally {
    await receiver.close()
    await pair.stop()
  }
}
