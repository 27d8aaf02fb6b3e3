// A replay from the archive, end to end (docs/replay.md, "From the archive"): BENCH_MESSAGES
// (default 20,000) messages written a month ago into a folder archive, then replayed by a relay
// (SQLite) at ratePerSecond 10,000 to a receiver that answers 200 at once. Prints the messages per
// second from the replay's start to the last copy received, and the relay's CPU per message. Aim
// (issue 41): >= 5,000 messages/s per relay when the receiver keeps up; never asserted.
//   node bench/replay-archive.mjs   (BENCH_RUNS, default 2; BENCH_FILE_MESSAGES, default 10,000)
import { mkdtempSync, rmSync } from 'node:fs'
import http from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { importSource } from './load-source.mjs'

const N = Number(process.env.BENCH_MESSAGES ?? 20_000)
const FILE = Number(process.env.BENCH_FILE_MESSAGES ?? 10_000)
const RUNS = Number(process.env.BENCH_RUNS ?? 2)
const TOKEN = 'bench-admin-token'
const MONTH_AGO = Date.now() - 30 * 86_400_000

/** The relay and the archive's module, bundled from src/ (packages left external). */
function load() {
  return importSource(`export { createRelay } from './src/relay/index'
        export { Archive } from './src/relay/destinations/archive/module'
        export { parseArchiveSettings } from './src/relay/destinations/archive/settings'`)
}

const message = (i, receivedAt) => ({
  type: 'track',
  messageId: `m-${i}`,
  timestamp: receivedAt,
  receivedAt,
  userId: `user-${i % 5000}`,
  event: 'Order Completed',
  properties: { orderId: `o-${i}`, revenue: 9.99, currency: 'EUR', items: ['a', 'b'] },
})

async function run(mod) {
  const dir = mkdtempSync(join(tmpdir(), 'tracklet-replay-bench-'))
  const archive = { url: `file://${join(dir, 'archive')}`, maxFileMessages: FILE }
  const sender = mod.Archive.create(mod.parseArchiveSettings(archive, 'Archive'), { source: 'web', relayId: 'bench' })
  for (let start = 0; start < N; start += FILE) {
    const batch = []
    for (let i = start; i < Math.min(N, start + FILE); i++) {
      const receivedAt = new Date(MONTH_AGO + i * 10).toISOString()
      batch.push({ deliveryId: i + 1, source: 'web', receivedAt, message: message(i, receivedAt) })
    }
    await sender.sendBatch(batch)
  }
  await sender.close()

  let received = 0
  let finished
  const all = new Promise((done) => {
    finished = done
  })
  const receiver = http.createServer((req, res) => {
    req.resume()
    req.on('end', () => {
      res.end('ok')
      if (++received === N) finished()
    })
  })
  await new Promise((done) => receiver.listen(0, '127.0.0.1', done))
  const url = `http://127.0.0.1:${receiver.address().port}/hook`
  const relay = await mod.createRelay({
    port: 0,
    database: join(dir, 'relay.db'),
    adminToken: TOKEN,
    allowPrivateNetworks: true,
    logLevel: 'error',
    sources: [{ name: 'web', writeKey: 'bench-write-key', destinations: { Archive: archive } }],
  })
  try {
    const cpu = process.cpuUsage()
    const started = performance.now()
    const response = await fetch(`${relay.url}/v1/replays`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        from: 'archive',
        filter: { source: 'web', since: new Date(MONTH_AGO - 1000).toISOString() },
        to: { url },
        ratePerSecond: 10_000,
      }),
    })
    if (response.status !== 202) throw new Error(`replay refused: ${await response.text()}`)
    await all
    const seconds = (performance.now() - started) / 1000
    const used = process.cpuUsage(cpu)
    return { perSecond: N / seconds, cpuUsPerMessage: (used.user + used.system) / N }
  } finally {
    await relay.close()
    receiver.close()
    rmSync(dir, { recursive: true, force: true })
  }
}

const mod = await load()
const results = []
for (let i = 0; i < RUNS; i++) {
  const result = await run(mod)
  results.push(result)
  console.log(
    `run ${i + 1}: ${Math.round(result.perSecond)} messages/s, ${Math.round(result.cpuUsPerMessage)} µs CPU per message (relay and receiver, one process)`,
  )
}
const median = (values) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)]
console.log(`median: ${Math.round(median(results.map((r) => r.perSecond)))} messages/s over ${N} messages`)
