// The end-to-end demo: SDK → relay → durable outbox → signed webhook → receiver.
//
// It starts, all in this process and on loopback: a webhook receiver that verifies every
// X-Signature, an embedded relay (its SQLite outbox in a temporary file), and an SDK client that
// sends one call of each type. Then it asks the relay, through its admin API, for a deletion and
// an audience sync, prints what the receiver got, and exits 0 only if everything arrived signed.
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

let exitCode = 0
try {
  const analytics = new Analytics(WRITE_KEY, { endpoint: relay.url })
  analytics.on('error', (error) => console.error(`SDK error: ${error.code}: ${error.message}`))
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
  // Not for Webhooks: All is off and Webhooks is not named, so the relay routes it nowhere.
  analytics.track({ userId: '42', event: 'Internal Only', integrations: { All: false } })
  await analytics.closeAndFlush()
  const stats = analytics.stats()
  console.log(`SDK: ${stats.delivered} delivered to the relay, ${stats.failed} failed`)

  await admin(relay, 'POST', '/v1/deletions', { userId: 'gone-1' })
  const audience = await admin(relay, 'PUT', '/v1/audiences/High%20Value%20Customers', {
    source: 'demo',
    userIds: ['42', '43'],
  })
  console.log(`audience sync "High Value Customers": ${JSON.stringify(audience)}`)

  // 6 calls + 1 deletion + 2 audience identifies; the "Internal Only" track must not arrive.
  const expected = 9
  const arrived = await waitFor(() => receiver.received.length >= expected, 15_000)
  console.log(`\nthe receiver got ${receiver.received.length} webhook(s):`)
  for (const entry of receiver.received) {
    console.log(
      `  ${entry.verified ? 'signature ok ' : 'BAD SIGNATURE'}  ${entry.message.type.padEnd(8)} ${summarise(entry)}`,
    )
  }
  const allVerified = receiver.received.every((entry) => entry.verified)
  const leaked = receiver.received.some((entry) => entry.message.event === 'Internal Only')
  if (!arrived || !allVerified || leaked || receiver.received.length !== expected) {
    console.error(`\nFAILED: expected ${expected} signed webhooks${leaked ? ' (and the filtered track arrived)' : ''}`)
    exitCode = 1
  } else {
    const log = await admin(relay, 'GET', '/v1/deliveries?status=delivered')
    console.log(
      `\nall ${expected} arrived and verified; the relay's log shows ${log.deliveries?.length ?? log.length} delivered`,
    )
  }
} finally {
  await relay.close()
  await new Promise((resolve) => receiver.server.close(resolve))
  rmSync(dataDir, { recursive: true, force: true })
}
process.exit(exitCode)
