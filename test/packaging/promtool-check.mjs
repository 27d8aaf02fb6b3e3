// `promtool check metrics` on everything the relay itself defines: starts a relay from the built
// package (dist/, as a user runs it), sends it one message so the ingest and delivery series have
// samples, scrapes /metrics and pipes the text to promtool. Prometheus's linter flags names,
// units, help texts and types that its tooling reads wrongly.
//
// The process_/nodejs_ series are prom-client's defaults, not the relay's: they are left out only
// if promtool flags them (so a problem of ours is never hidden behind theirs).
import { spawnSync } from 'node:child_process'
import { createServer } from 'node:http'

const { createRelay } = await import('tracklet/relay')

const WRITE_KEY = 'promtool-write-key'
const TOKEN = 'promtool-metrics-token'

const receiver = createServer((req, res) => {
  req.resume()
  req.on('end', () => res.writeHead(200).end('ok'))
})
await new Promise((resolve) => receiver.listen(0, '127.0.0.1', resolve))
const hook = `http://127.0.0.1:${receiver.address().port}/hook`

const relay = await createRelay({
  port: 0,
  host: '127.0.0.1',
  database: ':memory:',
  allowPrivateNetworks: true,
  metricsToken: TOKEN,
  sources: [{ name: 'web', writeKey: WRITE_KEY, destinations: { Webhooks: { webhooks: [{ url: hook }] } } }],
})
try {
  const auth = `Basic ${Buffer.from(`${WRITE_KEY}:`).toString('base64')}`
  const ingest = await fetch(`${relay.url}/v1/track`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: auth },
    body: JSON.stringify({ userId: 'u1', event: 'Checked', messageId: 'promtool-1' }),
  })
  if (ingest.status !== 200) throw new Error(`ingest answered ${ingest.status}: ${await ingest.text()}`)
  const text = await scrapeAfterDelivery()

  let result = promtool(text)
  if (result.status !== 0 && flagsOnly(result.output, /^(process_|nodejs_)/)) {
    console.log('promtool flags only prom-client defaults (process_*, nodejs_*); checking the relay’s own series:')
    console.log(indent(result.output))
    result = promtool(withoutFamilies(text, /^(process_|nodejs_)/))
  }
  if (result.status !== 0) {
    console.error(`promtool check metrics failed:\n${indent(result.output)}`)
    process.exitCode = 1
  } else {
    const families = new Set(
      text
        .split('\n')
        .filter((l) => l.startsWith('# TYPE tracklet_'))
        .map((l) => l.split(' ')[2]),
    )
    console.log(`promtool check metrics: clean (${families.size} tracklet_ families)`)
  }
} finally {
  await relay.close()
  receiver.close()
}

// Scrapes until the delivery was counted, so every family of ours has a sample.
async function scrapeAfterDelivery() {
  for (let tries = 0; tries < 100; tries++) {
    const response = await fetch(`${relay.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })
    const text = await response.text()
    if (/^tracklet_delivery_attempts_total\{[^}]*outcome="delivered"[^}]*\} [1-9]/m.test(text)) return text
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error('the delivery was never counted in /metrics')
}

function promtool(text) {
  const run = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' })
  if (run.error) throw new Error(`could not run promtool (install Debian's prometheus package): ${run.error.message}`)
  return { status: run.status, output: `${run.stdout}${run.stderr}`.trim() }
}

// Whether every problem promtool reports names a metric matching `pattern`.
function flagsOnly(output, pattern) {
  const problems = output.split('\n').filter((line) => line.trim() !== '')
  return problems.length > 0 && problems.every((line) => pattern.test(line.trim()))
}

function withoutFamilies(text, pattern) {
  return text
    .split('\n')
    .filter((line) => {
      const name = line.startsWith('#') ? line.split(' ')[2] : line.split(/[{ ]/)[0]
      return name === undefined || !pattern.test(name)
    })
    .join('\n')
}

function indent(text) {
  return text.replace(/^/gm, '  ')
}
