// A serverless cold start pays for the SDK's import and for its first batch: this measures both,
// for tracklet's built package and for @segment/analytics-node, each in fresh processes taken in
// turn (A B A B …) against a local sink, and prints the medians and tracklet's ratio to Segment's.
//
//   node bench/cold-start.mjs [--rounds 15]     (npm run build first: it loads dist/)
import { execFile } from 'node:child_process'
import { createServer } from 'node:http'
import { fileURLToPath } from 'node:url'

const rounds = Number(process.argv[process.argv.indexOf('--rounds') + 1]) || 15
const TRACKLET = fileURLToPath(new URL('../dist/index.js', import.meta.url))

const sink = createServer((request, response) => {
  request.resume()
  request.on('end', () => response.end('{}'))
})
await new Promise((resolve) => sink.listen(0, '127.0.0.1', resolve))
const endpoint = `http://127.0.0.1:${sink.address().port}`

// Each child prints how long its import took and how long import plus one batch sent took (ms).
const children = {
  tracklet: `const t0 = performance.now()
const { Analytics } = await import(${JSON.stringify(TRACKLET)})
const t1 = performance.now()
const analytics = new Analytics('k', { endpoint: process.argv[1], flushAt: 1 })
await new Promise((resolve) => analytics.track({ userId: 'u', event: 'Cold Start' }, resolve))
console.log(JSON.stringify({ importMs: t1 - t0, firstBatchMs: performance.now() - t0 }))
await analytics.closeAndFlush()`,
  segment: `const t0 = performance.now()
const { Analytics } = await import('@segment/analytics-node')
const t1 = performance.now()
const analytics = new Analytics({ writeKey: 'k', host: process.argv[1], flushAt: 1 })
await new Promise((resolve) => analytics.track({ userId: 'u', event: 'Cold Start' }, resolve))
console.log(JSON.stringify({ importMs: t1 - t0, firstBatchMs: performance.now() - t0 }))
await analytics.closeAndFlush()`,
}

function run(name) {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, ['--input-type=module', '-e', children[name], endpoint], (error, stdout, stderr) =>
      error ? reject(new Error(`${name}: ${stderr || error.message}`)) : resolve(JSON.parse(stdout)),
    )
  })
}

const samples = { tracklet: [], segment: [] }
await run('tracklet') // warm the disk cache for both
await run('segment')
for (let i = 0; i < rounds; i++) {
  for (const name of i % 2 === 0 ? ['tracklet', 'segment'] : ['segment', 'tracklet'])
    samples[name].push(await run(name))
}
sink.close()

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]
}
console.log(`cold start, ${rounds} fresh processes each, alternating (Node ${process.version})`)
for (const figure of ['importMs', 'firstBatchMs']) {
  const t = median(samples.tracklet.map((s) => s[figure]))
  const s = median(samples.segment.map((s) => s[figure]))
  const label = figure === 'importMs' ? 'import' : 'import + first batch sent'
  console.log(
    `${label.padEnd(26)} tracklet ${t.toFixed(1)} ms   segment ${s.toFixed(1)} ms   ratio ${(t / s).toFixed(2)}`,
  )
}
