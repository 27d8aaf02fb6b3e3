// The end-to-end demo: SDK → relay → durable outbox → signed webhook → receiver.
//
// It starts, all in this process and on loopback: a webhook receiver that verifies every
// X-Signature, an embedded relay (its SQLite outbox in a temporary file), and an SDK client that
// sends one call of each type. Then it asks the relay, through its admin API, for a deletion and
// an audience sync, waits until the receiver has every webhook and the relay's log has recorded
// every delivery, prints what the receiver got, and exits 0 only if every check agrees: 7 calls
// accepted (6 routed to Webhooks, 1 routed nowhere by its integrations), 9 signed webhooks, and 9
// delivered deliveries in the log (the one routed nowhere wrote none).
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import http from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Analytics } from 'tracklet'
import { createRelay } from 'tracklet/relay'
import { verifySignature } from 'tracklet/webhooks'

const WRITE_KEY = 'DEMO_WRITE_KEY'
const sharedSecret = randomBytes(16).toString('hex')
const adminToken = randomBytes(16).toString('hex')
const dataDir = mkdtempSync(join(tmpdir(), 'tracklet-demo-'))

/** A receiver that keeps the raw body, as signature verification needs the exact bytes. */
function startReceiver() {
  const received = []
  const server = http.createServer((req, res) => {
    const chunks = []
    req.on('data', (chunk) => chunks.push(chunk))
    req.on('end', () => {
      const rawBody = Buffer.concat(chunks)
      const verified = verifySignature(rawBody, String(req.headers['x-signature'] ?? ''), sharedSecret)
      received.push({ message: JSON.parse(rawBody.toString('utf8')), verified })
      res.writeHead(verified ? 200 : 401).end()
    })
  })
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({ server, received, url: `http://127.0.0.1:${server.address().port}/webhook` }),
    ),
  )
}

async function admin(relay, method, path, body) {
  const response = await fetch(new URL(path, relay.url), {
    method,
    headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`)
  return response.json()
}

async function waitFor(condition, timeoutMs) {
  const deadline = Date.now() + timeoutMs
  while (!condition() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50))
  return condition()
}

function summarise({ message }) {
  const who = `userId=${message.userId ?? message['User ID']}`
  switch (message.type) {
    case 'track':
      return `${who} event=${JSON.stringify(message.event)} properties=${JSON.stringify(message.properties)}`
    case 'identify':
      return `${who} traits=${JSON.stringify(message.traits)}`
    case 'page':
      return `${who} properties.path=${message.properties?.path}`
    case 'screen':
      return `${who} name=${JSON.stringify(message.name)} context.os=${JSON.stringify(message.context?.os)}`
    case 'group':
      return `${who} groupId=${message.groupId} traits=${JSON.stringify(message.traits)}`
    case 'alias':
      return `"Previous ID"=${message['Previous ID']} "User ID"=${message['User ID']}`
    default:
      return `${who} (no version field: ${!('version' in message)})`
  }
}

const receiver = await startReceiver()
const relay = await createRelay({
  port: 0,
  host: '127.0.0.1',
  database: join(dataDir, 'tracklet.db'),
  adminToken,
  allowPrivateNetworks: true, // the receiver is on loopback
  sources: [
    {
      name: 'demo',
      writeKey: WRITE_KEY,
      destinations: { Webhooks: { webhooks: [{ url: receiver.url }], sharedSecret } },
    },
  ],
})
console.log(`relay listening on ${relay.url}; receiver on ${receiver.url}\n`)

// DEMO_REPEAT=N runs the send-and-check round N times on the same relay (CI does 20 in a row): a
// demo that sometimes contradicts itself is a bug, not bad luck.
const rounds = Number(process.env.DEMO_REPEAT ?? 1)
let exitCode = 0
try {
  for (let round = 1; round <= rounds && exitCode === 0; round++) {
    const problems = await runRound(round, round === 1)
    if (problems.length > 0) {
      console.error(`\nFAILED (round ${round} of ${rounds}):\n  ${problems.join('\n  ')}`)
      exitCode = 1
    } else if (rounds > 1) {
      console.log(`round ${round} of ${rounds}: every check agrees`)
    }
  }
} finally {
  await relay.close()
  await new Promise((resolve) => receiver.server.close(resolve))
  rmSync(dataDir, { recursive: true, force: true })
}
process.exit(exitCode)

/**
 * Sends one call of each type (and one that integrations route nowhere), a deletion and an
 * audience sync; waits until the receiver has every webhook AND the relay's log has settled every
 * delivery; returns what disagrees (nothing when all is well). Prints the details when `verbose`.
 */
async function runRound(round, verbose) {
  const problems = []
  receiver.received.length = 0
  const before = await deliveryLog()
  const firstNewId = before.reduce((highest, d) => Math.max(highest, d.id), 0)

  const analytics = new Analytics(WRITE_KEY, { endpoint: relay.url })
  analytics.on('error', (error) => problems.push(`SDK error: ${error.code}: ${error.message}`))
  analytics.identify({ userId: '42', traits: { email: 'ada@example.com', plan: 'pro' } })
  analytics.track({
    userId: '42',
    event: 'Order Completed',
    properties: { revenue: '9.99', shippingMethod: 'Premium' },
  })
  analytics.page({
    userId: '42',
    name: 'Pricing',
    properties: { url: 'https://example.com/pricing', path: '/pricing', title: 'Pricing', referrer: '' },
  })
  analytics.screen({
    userId: '42',
    name: 'Home',
    context: {
      device: { model: 'Pixel 9', type: 'android' },
      os: { name: 'Android', version: '16' },
      app: { build: '7', name: 'Demo', version: '1.0' },
    },
  })
  analytics.group({ userId: '42', groupId: 'acme', traits: { name: 'Acme', employees: 120, 'total billed': 830 } })
  analytics.alias({ previousId: 'anon-7', userId: '42' })
  // Not for Webhooks: All is off and Webhooks is not named, so the relay accepts it and routes it nowhere.
  analytics.track({ userId: '42', event: 'Internal Only', integrations: { All: false } })
  await analytics.closeAndFlush()
  const stats = analytics.stats()
  if (stats.delivered !== 7 || stats.failed !== 0)
    problems.push(`SDK: expected 7 accepted, 0 failed; got ${JSON.stringify(stats)}`)

  await admin(relay, 'POST', '/v1/deletions', { userId: 'gone-1' })
  // A new audience each round, so that each sync has members to announce.
  const audienceName = round === 1 ? 'High Value Customers' : `High Value Customers ${round}`
  const audience = await admin(relay, 'PUT', `/v1/audiences/${encodeURIComponent(audienceName)}`, {
    source: 'demo',
    userIds: ['42', '43'],
  })

  // 6 calls + 1 deletion + 2 audience identifies; the "Internal Only" track must not arrive.
  const expected = 9
  const arrived = await waitFor(() => receiver.received.length >= expected, 15_000)
  // Outcomes are written in batches a moment after each webhook is answered: wait for the log too,
  // so that what is reported below is what the relay recorded, not a snapshot taken too early.
  const logSettled = await waitForAsync(
    async () => (await deliveryLog(firstNewId)).filter((d) => d.status !== 'pending').length >= expected,
    15_000,
  )
  const log = await deliveryLog(firstNewId)
  const delivered = log.filter((d) => d.status === 'delivered').length

  if (verbose) {
    console.log(`SDK: ${stats.delivered} accepted by the relay, ${stats.failed} failed`)
    console.log(
      '  6 are routed to Webhooks; 1 ("Internal Only", integrations { All: false }) is routed nowhere, as asked',
    )
    console.log(`audience sync "${audienceName}": ${JSON.stringify(audience)}`)
    console.log(`\nthe receiver got ${receiver.received.length} webhook(s):`)
    for (const entry of receiver.received) {
      console.log(
        `  ${entry.verified ? 'signature ok ' : 'BAD SIGNATURE'}  ${entry.message.type.padEnd(8)} ${summarise(entry)}`,
      )
    }
  }
  const allVerified = receiver.received.every((entry) => entry.verified)
  const leaked = receiver.received.some((entry) => entry.message.event === 'Internal Only')
  if (!arrived || receiver.received.length !== expected)
    problems.push(`receiver: expected ${expected} webhooks, got ${receiver.received.length}`)
  if (!allVerified) problems.push('receiver: a webhook failed signature verification')
  if (leaked) problems.push('receiver: the "Internal Only" track arrived, though integrations turned Webhooks off')
  if (!logSettled || log.length !== expected || delivered !== expected) {
    problems.push(
      `relay log: expected ${expected} deliveries, all delivered; got ${log.length}, ${delivered} delivered`,
    )
  }
  if (verbose && problems.length === 0) {
    console.log(`\nall ${expected} arrived and verified; the relay's log shows ${delivered} delivered and nothing else`)
  }
  return problems
}

/** The relay's deliveries with an id above `after`: the log's newest page holds them all here (9 a round). */
async function deliveryLog(after = 0) {
  const page = await admin(relay, 'GET', '/v1/deliveries?limit=500')
  return page.deliveries.filter((d) => d.id > after)
}

async function waitForAsync(condition, timeoutMs) {
  const deadline = Date.now() + timeoutMs
  while (!(await condition())) {
    if (Date.now() > deadline) return false
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  return true
}
