import { afterEach, describe, expect, it } from 'vitest'
import { Webhook } from 'standardwebhooks'
import {
  signStandardWebhook,
  verifyStandardWebhook,
  WebhookDestination,
  type DeliverableMessage,
} from '../../src/webhooks/index'
import { answer, startReceiver, type TestReceiver } from './receiver'

// whsec_ + base64 of a random 24-byte key, as the spec's examples.
const newSecret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'
const oldSecret = 'whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD'
const message: DeliverableMessage = {
  type: 'identify',
  messageId: 'msg-42',
  userId: 'u-1',
  traits: { name: 'Zoë', plan: 'pro' },
  timestamp: '2026-01-02T03:04:05.678Z',
}

let hook: TestReceiver | undefined
afterEach(async () => {
  await hook?.close()
  hook = undefined
})

async function deliver(settings: Omit<ConstructorParameters<typeof WebhookDestination>[0], 'webhooks'>) {
  hook = await startReceiver(answer(200))
  const result = await new WebhookDestination({ webhooks: [{ url: hook.url }], ...settings }).send(message)
  expect(result.ok).toBe(true)
  const received = hook.requests[0]!
  return { body: received.body, headers: received.headers as Record<string, string> }
}

describe('Standard Webhooks on the wire', () => {
  it('sends webhook-id (the message id), webhook-timestamp (now, in seconds) and a v1 signature', async () => {
    const before = Math.floor(Date.now() / 1000)
    const { headers } = await deliver({ standardWebhooks: { secrets: [newSecret] } })
    expect(headers['webhook-id']).toBe('msg-42')
    expect(Number(headers['webhook-timestamp'])).toBeGreaterThanOrEqual(before)
    expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/)
    expect(headers).not.toHaveProperty('x-signature') // no sharedSecret, so no platform signature
  })

  it('is verified by the standardwebhooks package', async () => {
    const { body, headers } = await deliver({ standardWebhooks: { secrets: [newSecret] } })
    expect(new Webhook(newSecret).verify(body.toString('utf8'), headers)).toEqual(JSON.parse(body.toString('utf8')))
    expect(() => new Webhook(oldSecret).verify(body.toString('utf8'), headers)).toThrow(/No matching signature/)
  })

  it('signs with every secret during a rotation: receivers on either secret accept it', async () => {
    const { body, headers } = await deliver({ standardWebhooks: { secrets: [newSecret, oldSecret] } })
    expect(headers['webhook-signature']?.split(' ')).toHaveLength(2)
    expect(() => new Webhook(newSecret).verify(body.toString('utf8'), headers)).not.toThrow()
    expect(() => new Webhook(oldSecret).verify(body.toString('utf8'), headers)).not.toThrow()
  })

  it('with `true`, signs with sharedSecret beside X-Signature (a plain secret as raw bytes)', async () => {
    const { body, headers } = await deliver({ sharedSecret: 's3cret', standardWebhooks: true })
    expect(headers['x-signature']).toMatch(/^[0-9a-f]{40}$/)
    expect(() => new Webhook('s3cret', { format: 'raw' }).verify(body.toString('utf8'), headers)).not.toThrow()
    expect(verifyStandardWebhook(body, headers, 's3cret')).toBe(true)
  })

  it('gives a message without an id a webhook-id that is the same on every attempt', async () => {
    hook = await startReceiver(answer(500))
    const webhooks = new WebhookDestination({
      webhooks: [{ url: hook.url }],
      standardWebhooks: { secrets: [newSecret] },
    })
    const deletion: DeliverableMessage = { type: 'delete', userId: 'u-1', timestamp: '2026-01-02T03:04:05.678Z' }
    await webhooks.send(deletion)
    await webhooks.send(deletion)
    const [first, second] = hook.requests.map((request) => request.headers['webhook-id'])
    expect(first).toMatch(/^msg_[0-9a-f]{32}$/)
    expect(second).toBe(first)
  })
})

describe('verifyStandardWebhook', () => {
  const body = '{"type":"track","event":"Zoë signed up"}'
  const now = Date.UTC(2026, 0, 2, 3, 4, 5)
  const timestamp = Math.floor(now / 1000)
  const headers = signStandardWebhook({ id: 'msg-1', timestamp, body, secrets: newSecret })

  it('accepts what the standardwebhooks package signs', () => {
    const theirs = new Webhook(newSecret).sign('msg-1', new Date(now), body)
    expect(theirs).toBe(headers['webhook-signature'])
    expect(verifyStandardWebhook(body, { ...headers, 'webhook-signature': theirs }, newSecret, { now })).toBe(true)
  })

  it('accepts the raw body as bytes, and headers in any case or as a fetch Headers', () => {
    expect(verifyStandardWebhook(Buffer.from(body), headers, newSecret, { now })).toBe(true)
    const shouted = Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toUpperCase(), value]))
    expect(verifyStandardWebhook(body, shouted, newSecret, { now })).toBe(true)
    expect(verifyStandardWebhook(body, new Headers(headers), newSecret, { now })).toBe(true)
  })

  it('accepts any of several secrets (a rotation on the receiving side)', () => {
    expect(verifyStandardWebhook(body, headers, [oldSecret, newSecret], { now })).toBe(true)
    expect(verifyStandardWebhook(body, headers, [oldSecret], { now })).toBe(false)
  })

  it('accepts a timestamp at the edge of the tolerance, refuses one past it, either way', () => {
    expect(verifyStandardWebhook(body, headers, newSecret, { now: now + 300_000 })).toBe(true)
    expect(verifyStandardWebhook(body, headers, newSecret, { now: now + 301_000 })).toBe(false) // stale: a replay
    expect(verifyStandardWebhook(body, headers, newSecret, { now: now - 301_000 })).toBe(false) // from the future
    expect(verifyStandardWebhook(body, headers, newSecret, { now: now + 60_000, toleranceSeconds: 30 })).toBe(false)
  })

  it('refuses a replayed signature under a fresh timestamp (the timestamp is signed)', () => {
    const replay = { ...headers, 'webhook-timestamp': String(timestamp + 3600) }
    expect(verifyStandardWebhook(body, replay, newSecret, { now: now + 3_600_000 })).toBe(false)
  })

  it.each<[string, Record<string, string | undefined>]>([
    ['a tampered id', { 'webhook-id': 'msg-2' }],
    ['a missing signature', { 'webhook-signature': undefined }],
    ['a missing id', { 'webhook-id': undefined }],
    ['a non-numeric timestamp', { 'webhook-timestamp': '2026-01-02T03:04:05Z' }],
    ['a v2 signature only', { 'webhook-signature': (headers['webhook-signature'] ?? '').replace('v1,', 'v2,') }],
    ['a garbage signature', { 'webhook-signature': 'v1,!!!' }],
  ])('refuses %s', (_case, change) => {
    expect(verifyStandardWebhook(body, { ...headers, ...change }, newSecret, { now })).toBe(false)
  })

  it('refuses a tampered body, a parsed body and an invalid secret without throwing', () => {
    expect(verifyStandardWebhook(body.replace('Zoë', 'Zoe'), headers, newSecret, { now })).toBe(false)
    expect(verifyStandardWebhook(JSON.parse(body) as string, headers, newSecret, { now })).toBe(false)
    expect(verifyStandardWebhook(body, headers, 'whsec_***', { now })).toBe(false)
    expect(verifyStandardWebhook(body, headers, [], { now })).toBe(false)
  })
})
