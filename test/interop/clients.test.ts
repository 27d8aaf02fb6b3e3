import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Relay } from '../../src/relay/index'
import { verifySignature } from '../../src/webhooks/index'
import { adminGet, type Receiver, startReceiver, startRelay, waitFor } from '../relay/helpers'

// The SDKs people already run in production, pointed at the relay with nothing changed but the
// URL (docs/ingest.md, "Clients tried"). Each runs in a process of its own
// (send-all.mjs), which must end by itself once the client is flushed.

const SHARED_SECRET = 'interop-s3cret'
const WRITE_KEY = 'wk-interop'
const SCRIPT = fileURLToPath(new URL('./send-all.mjs', import.meta.url))
const TYPES = ['identify', 'track', 'page', 'screen', 'group', 'alias'] as const

interface Sent {
  client: string
  version: string
  requests: { headers?: Record<string, string>; body: { batch: Record<string, any>[]; sentAt?: string } }[]
  errors: string[]
}

let receiver: Receiver
let relay: Relay
beforeAll(async () => {
  receiver = await startReceiver()
  relay = await startRelay(receiver.url, {
    sources: [
      {
        name: 'interop',
        writeKey: WRITE_KEY,
        destinations: { Webhooks: { webhooks: [{ url: receiver.url }], sharedSecret: SHARED_SECRET } },
      },
    ],
  })
})
afterAll(async () => {
  await receiver.close()
  await relay.close()
})

/** Runs send-all.mjs for `client`; it must exit 0 by itself (the kill is only a backstop). */
function runClient(client: string): Promise<Sent> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [SCRIPT, client, relay.url, WRITE_KEY],
      { timeout: 15_000, killSignal: 'SIGKILL' },
      (error, stdout, stderr) => {
        if (error !== null) {
          const why = error.killed ? 'was still running after 15 s: the client kept the process alive' : error.message
          reject(new Error(`${client}: ${why}\n${stderr}`))
          return
        }
        resolve(JSON.parse(stdout.trim().split('\n').at(-1)!) as Sent)
      },
    )
  })
}

/** The webhook body for a message of the client's, as docs/webhooks.md describes it, with the given inputs. */
function expectedBody(
  type: (typeof TYPES)[number],
  sent: Record<string, any>,
  timestamp: string,
  receivedAt: string,
): unknown {
  const common = { version: 1, type, timestamp, context: sent['context'], messageId: sent['messageId'], receivedAt }
  switch (type) {
    case 'identify':
      return { ...common, userId: 'u-1', traits: { email: 'a@b.co', plan: 'pro' } }
    case 'track':
      return { ...common, userId: 'u-1', event: 'Order Completed', properties: { revenue: 9.99, currency: 'EUR' } }
    case 'page':
      return {
        ...common,
        userId: 'u-1',
        properties: {
          url: 'https://example.com/pricing',
          path: '/pricing',
          title: 'Pricing',
          referrer: 'https://example.com/',
        },
      }
    case 'screen':
      return { ...common, userId: 'u-1', name: 'Home' }
    case 'group':
      return { ...common, userId: 'u-1', groupId: 'acme', traits: { name: 'Acme', employees: 120 } }
    case 'alias':
      return { ...common, 'Previous ID': 'anon-7', 'User ID': 'u-1' }
  }
}

/** Waits until every message of `client` is delivered, and returns the delivery log's view of them. */
async function deliveredMessages(client: string): Promise<Map<string, any>> {
  const ids = TYPES.map((type) => `${client}-${type}`)
  return waitFor(async () => {
    const { body } = await adminGet(`${relay.url}/v1/deliveries?limit=500`)
    const ours = (body.deliveries as any[]).filter((d) => ids.includes(d.messageId))
    if (ours.length < ids.length || ours.some((d) => d.status !== 'delivered')) return undefined
    return new Map(ours.map((d) => [d.messageId as string, d.message]))
  }, `every ${client} message delivered`)
}

const CLIENTS = [
  ['segment', '@segment/analytics-node', '3.1.0'],
  ['rudder', 'analytics-node', '3.0.13'],
] as const

describe.each(CLIENTS)('%s', (client, libraryName, version) => {
  let sent: Sent
  let stored: Map<string, any>
  beforeAll(async () => {
    sent = await runClient(client)
    stored = await deliveredMessages(client)
  })

  it('reports no error, and ends its process by itself once flushed', () => {
    expect(sent.errors).toEqual([])
    expect(sent.version).toBe(version)
  })

  it.each(TYPES)('delivers its %s once, with the body of the table and a signature that verifies', (type) => {
    const messageId = `${client}-${type}`
    const arrivals = receiver.received.filter((r) => r.body['messageId'] === messageId)
    expect(arrivals).toHaveLength(1)
    const [arrival] = arrivals
    expect(verifySignature(arrival!.raw, arrival!.headers['x-signature'] as string, SHARED_SECRET)).toBe(true)

    const request = sent.requests.find((r) => r.body.batch.some((m) => m.messageId === messageId))!
    const message = request.body.batch.find((m) => m.messageId === messageId)!
    expect(message['context'].library).toEqual({ name: libraryName, version })
    if (type === 'screen') expect(message['context']).toMatchObject({ app: {}, os: {}, device: {} })
    const { receivedAt } = stored.get(messageId)
    expect(receivedAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
    expect(arrival!.body).toEqual(
      expectedBody(type, message, expectedTimestamp(message, request.body.sentAt), receivedAt),
    )
  })

  it('sends what docs/ingest.md ("Clients tried") says this client sends', () => {
    const batch = sent.requests.flatMap((r) => r.body.batch)
    if (client === 'segment') {
      // The time of each call as timestamp; the one given to track kept.
      expect(batch.every((m) => typeof m['timestamp'] === 'string')).toBe(true)
      expect(batch.find((m) => m['type'] === 'track')!['timestamp']).toBe('2024-01-02T03:04:05.678Z')
      expect(sent.requests.every((r) => r.headers!['Authorization']!.startsWith('Basic '))).toBe(true)
    } else {
      // No timestamp: only the device's originalTimestamp and the batch's sentAt, which the relay corrects by.
      expect(batch.every((m) => m['timestamp'] === undefined && typeof m['originalTimestamp'] === 'string')).toBe(true)
      expect(sent.requests.every((r) => typeof r.body.sentAt === 'string')).toBe(true)
    }
  })

  // The client's time, as docs/ingest.md ("Time") says the relay works it out, from what the client sent.
  function expectedTimestamp(message: Record<string, any>, sentAt: string | undefined): string {
    if (message['timestamp'] !== undefined) return new Date(message['timestamp']).toISOString()
    const receivedAt = Date.parse(stored.get(message['messageId']).receivedAt)
    const original = Date.parse(message['originalTimestamp'])
    return new Date(receivedAt - (Date.parse(sentAt!) - original)).toISOString()
  }
})
