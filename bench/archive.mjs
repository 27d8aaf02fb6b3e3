// The archive's cost, in the same run as the relay's ingest it is to be set against:
//   A: the relay's ingest only (SQLite, a webhook that never answers), relay CPU per message;
//   B: the archive writing the same messages into files (ndjson.gz, then Parquet) in a folder,
//      CPU per message, and reading them back as a replay from the archive does (msgs/s).
// A B A B … for BENCH_RUNS rounds (default 2); prints each and the medians. Issue 41's aims:
// archiving adds <= 10 % relay CPU per message at ingest; a replay from the archive reads >= 5,000
// msgs/s. The archive is bundled from src/ with esbuild (tsup's); the relay is dist/ (npm run build).
//   node bench/archive.mjs   (BENCH_MESSAGES, default 20,000; BENCH_FILE_MESSAGES, default 10,000)
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { importSource } from './load-source.mjs'
import { startHoldingRelay, WRITE_KEY } from './holding-relay.mjs'
import { postBatches } from './post-batches.mjs'

const N = Number(process.env.BENCH_MESSAGES ?? 20_000)
const FILE = Number(process.env.BENCH_FILE_MESSAGES ?? 10_000)
const RUNS = Number(process.env.BENCH_RUNS ?? 2)
const FLUSH_AT = 100
const IN_FLIGHT = 8

const message = (i) => ({
  type: 'track',
  messageId: `m-${i}`,
  timestamp: new Date().toISOString(),
  userId: `user-${i % 5000}`,
  event: 'Order Completed',
  properties: { orderId: `o-${i}`, revenue: 9.99, currency: 'EUR', items: ['a', 'b'] },
  context: { library: { name: 'tracklet', version: '0.1.0' } },
})

/** The archive's module, bundled from src/ (its packages left external, found from node_modules). */
function loadArchive() {
  return importSource(`export { Archive } from './src/relay/destinations/archive/module'
        export { readArchive } from './src/relay/destinations/archive/reader'
        export { FileStore } from './src/relay/destinations/archive/file-store'
        export { rememberStoredJson } from './src/relay/kit/stored-json'`)
}

/** A: the relay's ingest only; its CPU per message, µs. */
async function ingest(dir) {
  const relay = await startHoldingRelay(new URL('./relay-server.mjs', import.meta.url), join(dir, 'relay.db'))
  const bodies = []
  for (let i = 0; i < N; i += FLUSH_AT) {
    const batch = Array.from({ length: Math.min(FLUSH_AT, N - i) }, (_, j) => message(i + j))
    bodies.push(JSON.stringify({ batch, sentAt: new Date().toISOString() }))
  }
  const before = await relay.cpuMs()
  await postBatches(`${relay.url}/v1/batch`, bodies, { writeKey: WRITE_KEY, inFlight: IN_FLIGHT })
  const cpuUs = ((await relay.cpuMs()) - before) * 1000
  await relay.stop()
  return cpuUs / N
}

/** B: the archive writing N messages in files of FILE, then reading them back. */
async function archive(archiveModule, dir, format) {
  const { Archive, readArchive, FileStore, rememberStoredJson } = archiveModule
  const folder = join(dir, `archive-${format}`)
  const sender = Archive.create(Archive.parseSettings({ url: `file://${folder}`, format }, 'Archive'), {
    source: 'bench',
    relayId: 'bench',
  })
  const receivedAt = new Date().toISOString()
  const batches = []
  for (let i = 0; i < N; i += FILE) {
    batches.push(
      Array.from({ length: Math.min(FILE, N - i) }, (_, j) => {
        // As the store's claim gives it: the stored text (ingest puts its receivedAt in every
        // message) parsed, the text kept beside it.
        const text = JSON.stringify({ ...message(i + j), receivedAt })
        const stored = JSON.parse(text)
        rememberStoredJson(stored, text)
        return { deliveryId: i + j + 1, source: 'bench', message: stored, receivedAt }
      }),
    )
  }
  const cpu = process.cpuUsage()
  for (const batch of batches) {
    const outcomes = await sender.sendBatch(batch)
    if (outcomes.some((outcome) => outcome.kind !== 'delivered')) throw new Error(JSON.stringify(outcomes[0]))
  }
  const used = process.cpuUsage(cpu)
  const writeUs = (used.user + used.system) / N
  // What the files take, hidden notes beside them left out.
  const files = readdirSync(folder, { recursive: true, withFileTypes: true }).filter(
    (entry) => entry.isFile() && !entry.name.startsWith('.'),
  )
  const bytes = files.reduce((sum, entry) => sum + statSync(join(entry.parentPath, entry.name)).size, 0)
  const started = performance.now()
  let read = 0
  const window = { source: 'bench', since: Date.parse(receivedAt) - 1000, until: Date.now() + 1000 }
  for await (const _ of readArchive(new FileStore(folder), '', window)) read++
  if (read !== N) throw new Error(`read ${read} of ${N}`)
  return { writeUs, bytesPerMessage: bytes / N, readRate: N / ((performance.now() - started) / 1000) }
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = sorted.length >> 1
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}

const dir = mkdtempSync(join(tmpdir(), 'tracklet-archive-bench-'))
try {
  const archiveModule = await loadArchive()
  const rows = { ingest: [], ndjson: [], parquet: [], ndjsonRead: [], parquetRead: [] }
  for (let run = 0; run < RUNS; run++) {
    const runDir = mkdtempSync(join(dir, 'run-'))
    rows.ingest.push(await ingest(runDir))
    for (const format of ['ndjson', 'parquet']) {
      const { writeUs, readRate, bytesPerMessage } = await archive(archiveModule, runDir, format)
      rows[format].push(writeUs)
      rows[`${format}Bytes`] = bytesPerMessage
      rows[`${format}Read`].push(readRate)
    }
    const ingestUs = rows.ingest.at(-1)
    console.log(
      `run ${run + 1}: ingest ${ingestUs.toFixed(1)} µs relay CPU/msg; archive ndjson.gz ` +
        `${rows.ndjson.at(-1).toFixed(1)} µs/msg (${((100 * rows.ndjson.at(-1)) / ingestUs).toFixed(1)} %), ` +
        `parquet ${rows.parquet.at(-1).toFixed(1)} µs/msg (${((100 * rows.parquet.at(-1)) / ingestUs).toFixed(1)} %); ` +
        `files ${rows.ndjsonBytes.toFixed(1)} / ${rows.parquetBytes.toFixed(1)} bytes/msg; ` +
        `read back ${Math.round(rows.ndjsonRead.at(-1))} / ${Math.round(rows.parquetRead.at(-1))} msgs/s`,
    )
    rmSync(runDir, { recursive: true, force: true })
  }
  const ingestUs = median(rows.ingest)
  console.log(
    `median of ${RUNS}: archive CPU per message ${((100 * median(rows.ndjson)) / ingestUs).toFixed(1)} % ` +
      `(ndjson.gz), ${((100 * median(rows.parquet)) / ingestUs).toFixed(1)} % (parquet) of the relay's ingest ` +
      `(aim <= 10 %); read back ${Math.round(median(rows.ndjsonRead))} / ${Math.round(median(rows.parquetRead))} ` +
      'msgs/s (aim >= 5,000)',
  )
  // For bench/relay-issue.mjs, which sets BENCH_JSON.
  if (process.env.BENCH_JSON) {
    const share = (format) => (100 * median(rows[format])) / ingestUs
    const figures = {
      ndjsonPercent: share('ndjson'),
      parquetPercent: share('parquet'),
      ndjsonRead: median(rows.ndjsonRead),
      parquetRead: median(rows.parquetRead),
    }
    writeFileSync(process.env.BENCH_JSON, JSON.stringify(figures))
  }
} finally {
  rmSync(dir, { recursive: true, force: true })
}
