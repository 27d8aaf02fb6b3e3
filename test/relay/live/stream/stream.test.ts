import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { Relay } from '../../../../src/relay/index'
import { verifySignature } from '../../../../src/webhooks/index'
import { basic, post, type Receiver, startReceiver, startRelay, track, waitForDelivery } from '../../helpers'
import { openStream, type StreamReader } from './stream-client'

const SECRET = 'stream-shared-secret'

let receiver: Receiver
let relay: Relay
const readers: StreamReader[] = []

beforeEach(async () => {
  receiver = await startReceiver()
  // A 404 for event "Gone" dead-letters its delivery at once, with the receiver's answer.
  receiver.respond((_req, res) => {
    if (receiver.received.at(-1)?.body['event'] === 'Gone') res.writeHead(404).end('no such hook')
    else res.writeHead(200).end('ok')
  })
  relay = await startRelay(receiver.url, {
    streamReaders: 3,
    sources: [
      {
        name: 'web',
        writeKey: 'wk-test-web',
        destinations: { Webhooks: { webhooks: [{ url: receiver.url }], sharedSecret: SECRET } },
        schema: { blockedEvents: ['Blocked'] },
      },
      { name: 'app', writeKey: 'wk-app', destinations: { Webhooks: { webhooks: [{ url: receiver.url }] } } },
    ],
  })
})
afterEach(async () => {
  for (const reader of readers.splice(0)) reader.close()
  await relay.close()
  await receiver.close()
})

async function open(query = ''): Promise<StreamReader> {
  const reader = await openStream(relay.url, query)
  readers.push(reader)
  return reader
}

describe('GET /v1/stream', () => {
  it('streams ingested, refused, filtered and attempt events with their fields', async () => {
    const reader = await open()
    expect(reader.status).toBe(200)
    const ok = track({ userId: 'u-42', event: 'Signed Up' })
    const gone = track({ event: 'Gone' })
    const blocked = track({ event: 'Blocked' })
    const answer = await post(`${relay.url}/v1/batch`, {
      batch: [ok, gone, blocked, { type: 'track', event: 'No user', messageId: 'bad-1' }],
    })
    expect(answer.body.accepted).toBe(3)

    const ingested = await reader.next((e) => e.kind === 'ingested' && e.data.messageId === ok['messageId'], 'ingested')
    expect(ingested.data).toEqual({
      at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      source: 'web',
      messageId: ok['messageId'],
      type: 'track',
      event: 'Signed Up',
      userId: 'u-42',
    })
    const refused = await reader.next((e) => e.kind === 'refused', 'refused')
    expect(refused.data).toMatchObject({ source: 'web', messageId: 'bad-1', kind: 'invalid' })
    expect(refused.data.reason).toMatch(/userId|anonymousId/)
    const filtered = await reader.next((e) => e.kind === 'filtered', 'filtered')
    expect(filtered.data).toMatchObject({
      source: 'web',
      messageId: blocked['messageId'],
      reason: expect.stringMatching(/blocked/),
    })

    const delivered = await reader.next(
      (e) => e.kind === 'attempt' && e.data.messageId === ok['messageId'],
      'the delivered attempt',
    )
    expect(delivered.data).toEqual({
      at: expect.any(String),
      source: 'web',
      deliveryId: expect.stringMatching(/^\d+$/),
      messageId: ok['messageId'],
      url: receiver.url,
      outcome: 'delivered',
      status: 200,
      ms: expect.any(Number),
    })
    const failed = await reader.next(
      (e) => e.kind === 'attempt' && e.data.messageId === gone['messageId'],
      'the failed attempt',
    )
    expect(failed.data).toMatchObject({ outcome: 'failed', status: 404, url: receiver.url })
    expect(failed.data.error).toMatch(/404/)
  })

  it('announces a request refused whole, with its error code', async () => {
    const reader = await open('kinds=refused')
    expect((await post(`${relay.url}/v1/track`, track(), { authorization: basic('wk-wrong') })).status).toBe(401)
    const refused = await reader.next((e) => e.kind === 'refused', 'the refused request')
    expect(refused.data).toMatchObject({ kind: 'ERR_UNAUTHORIZED', reason: expect.any(String) })
    expect(refused.data.source).toBeUndefined()
  })

  it('gives a reader only the source and kinds it asked for', async () => {
    const appOnly = await open('source=app&kinds=ingested')
    const all = await open()
    await post(`${relay.url}/v1/track`, track({ messageId: 'from-web' }))
    await post(`${relay.url}/v1/track`, track({ messageId: 'from-app' }), { authorization: basic('wk-app') })
    await all.next((e) => e.kind === 'attempt' && e.data.messageId === 'from-app', 'the app attempt')
    await all.next((e) => e.kind === 'attempt' && e.data.messageId === 'from-web', 'the web attempt')
    await appOnly.next((e) => e.data.messageId === 'from-app', 'the app message')
    expect(appOnly.events.map((e) => [e.kind, e.data.source, e.data.messageId])).toEqual([
      ['ingested', 'app', 'from-app'],
    ])
  })

  it('refuses an unknown kind, parameter or source with a 400 naming it, and a reader without the token', async () => {
    expect((await open('kinds=ingested,bogus')).events[0]!.data.error).toMatchObject({
      code: 'ERR_INVALID_QUERY',
      message: expect.stringContaining('bogus'),
    })
    expect((await open('sauce=web')).events[0]!.data.error.message).toContain('sauce')
    expect((await open('source=nope')).status).toBe(400)
    expect((await openStream(relay.url, '', 'wrong-token')).status).toBe(401)
  })

  it('answers 503 past streamReaders, and takes a reader again once one leaves', async () => {
    const first = await open()
    await open()
    await open()
    const fourth = await open()
    expect(fourth.status).toBe(503)
    expect(fourth.events[0]!.data.error.code).toBe('ERR_TOO_MANY_READERS')
    first.close()
    const again = await (async () => {
      for (;;) {
        const reader = await open()
        if (reader.status === 200) return reader
        await new Promise((resolve) => setTimeout(resolve, 20))
      }
    })()
    expect(again.status).toBe(200)
  })

  it('forwards a source’s messages formatted and signed as its Webhooks destination sends them', async () => {
    const reader = await open('forward=web')
    const message = track({ event: 'Forwarded', properties: { plan: 'pro' } })
    await post(`${relay.url}/v1/track`, message)
    const forwarded = await reader.next((e) => e.kind === 'message', 'the forwarded message')
    await reader.next((e) => e.kind === 'attempt', 'its attempt')
    const sent = receiver.received.find((r) => r.body['messageId'] === message['messageId'])!
    expect(forwarded.data.messageId).toBe(message['messageId'])
    // The very body the destination sent, and its signature under the source's secret.
    expect(forwarded.data.body).toBe(sent.raw)
    expect(verifySignature(forwarded.data.body, forwarded.data.signature, SECRET)).toBe(true)
    expect(forwarded.data.signature).toBe(sent.headers['x-signature'])
    // Only that source's events: never another's.
    await post(`${relay.url}/v1/track`, track({ messageId: 'app-1' }), { authorization: basic('wk-app') })
    await post(`${relay.url}/v1/track`, track({ messageId: 'web-2' }))
    await reader.next((e) => e.kind === 'message' && e.data.messageId === 'web-2', 'the second message')
    expect(reader.events.some((e) => e.data.messageId === 'app-1')).toBe(false)
  })

  it('streams what happens from the moment a reader connects: nothing before it is replayed', async () => {
    const before = track()
    expect((await post(`${relay.url}/v1/track`, before)).status).toBe(200)
    await waitForDelivery(relay.url, 'delivered', before['messageId'] as string)
    const reader = await open()
    // What happened before the reader came is not replayed.
    await post(`${relay.url}/v1/track`, track({ messageId: 'after' }))
    const first = await reader.next(() => true, 'an event')
    expect(first.data.messageId).toBe('after')
  })
})
