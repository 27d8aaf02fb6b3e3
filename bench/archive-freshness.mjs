// How soon a message is in a visible archive file: a relay (dist/, SQLite) archiving one source to
// a folder gets messages at a steady rate; afterwards each message's time from its receipt to its
// file's appearance (the file's mtime: written, then renamed into place at once) is read from the
// files. Issue 41's aim: within maxFileSeconds + 60 s at p99.
//   node bench/archive-freshness.mjs [--rate 200] [--seconds 60] [--file-seconds 10]
import { fork } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { gunzipSync } from 'node:zlib'

const { values: args } = parseArgs({
  options: {
    rate: { type: 'string', default: '200' },
    seconds: { type: 'string', default: '60' },
    'file-seconds': { type: 'string', default: '10' },
  },
})
const RATE = Number(args.rate)
const SECONDS = Number(args.seconds)
const FILE_SECONDS = Number(args['file-seconds'])
const WRITE_KEY = 'bench-write-key'
const TICK_MS = 100

const dir = mkdtempSync(join(tmpdir(), 'tracklet-archive-fresh-'))
const folder = join(dir, 'archive')
const child = fork(new URL('./relay-server.mjs', import.meta.url), [
  JSON.stringify({
    port: 0,
    database: join(dir, 'relay.db'),
    sources: [
      {
        name: 'bench',
        writeKey: WRITE_KEY,
        destinations: { Archive: { url: `file://${folder}`, maxFileSeconds: FILE_SECONDS } },
      },
    ],
  }),
])
const next = () => new Promise((done) => child.once('message', done))
try {
  const { url } = await next()
  const authorization = `Basic ${Buffer.from(`${WRITE_KEY}:`).toString('base64')}`
  const perTick = Math.max(1, Math.round((RATE * TICK_MS) / 1000))
  let sent = 0
  const started = Date.now()
  while (Date.now() - started < SECONDS * 1000) {
    const batch = Array.from({ length: perTick }, () => ({
      type: 'track',
      event: 'Fresh',
      userId: 'u1',
      messageId: `f-${sent++}`,
    }))
    const answer = await fetch(`${url}/v1/batch`, {
      method: 'POST',
      headers: { authorization, 'content-type': 'application/json' },
      body: JSON.stringify({ batch }),
    })
    if (answer.status !== 200) throw new Error(`ingest answered ${answer.status}`)
    const wait = started + (sent / perTick) * TICK_MS - Date.now()
    if (wait > 0) await new Promise((done) => setTimeout(done, wait))
  }
  // Every message in a file, however long the last one takes.
  const waits = []
  const deadline = Date.now() + (FILE_SECONDS + 120) * 1000
  for (;;) {
    waits.length = 0
    for (const entry of readdirSync(folder, { recursive: true, withFileTypes: true })) {
      if (!entry.isFile() || !entry.name.endsWith('.ndjson.gz') || entry.name.startsWith('.')) continue
      const path = join(entry.parentPath, entry.name)
      const visible = statSync(path).mtimeMs
      for (const line of gunzipSync(readFileSync(path)).toString().split('\n')) {
        if (line !== '') waits.push(visible - Date.parse(JSON.parse(line).receivedAt))
      }
    }
    if (waits.length >= sent || Date.now() > deadline) break
    await new Promise((done) => setTimeout(done, 1000))
  }
  waits.sort((a, b) => a - b)
  const at = (p) => (waits[Math.max(0, Math.ceil(p * waits.length) - 1)] / 1000).toFixed(1)
  console.log(
    `${waits.length} of ${sent} messages archived at ${RATE}/s, maxFileSeconds ${FILE_SECONDS}: ` +
      `receipt to visible file p50 ${at(0.5)} s, p99 ${at(0.99)} s, worst ${at(1)} s ` +
      `(aim: p99 <= ${FILE_SECONDS + 60} s)`,
  )
} finally {
  child.send('stop')
  await next()
  rmSync(dir, { recursive: true, force: true })
}
