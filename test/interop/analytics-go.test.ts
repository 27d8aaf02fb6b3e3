import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { Analytics } from '../../src/index'
import type { Relay } from '../../src/relay/index'
import { adminGet, post, type Receiver, startReceiver, startRelay, waitFor, WRITE_KEY } from '../relay/helpers'
import { STORE_KINDS } from '../support/stores'

// Bodies shaped as analytics-go v3 sends them: `context.library` and the client's DefaultContext
// only at the batch's top level; `NewIntegrations().DisableAll()` written as a lower-case `all`.
// And the classic analytics-node's numeric ids, through the SDK. Real relay, real webhook receiver.

const GO_CONTEXT = { library: { name: 'analytics-go', version: '3.3.0' }, app: { name: 'billing' }, locale: 'en-US' }

describe.each(STORE_KINDS)('on the %s store', (kind) => {
  let receiver: Receiver
  let relay: Relay

  beforeEach(async () => {
    receiver = await startReceiver()
    relay = await startRelay(receiver.url, {}, kind)
  })
  afterEach(async () => {
    await receiver.close()
    await relay.close()
  })

  /** The webhook bodies received for `messageIds`, once each has arrived. */
  function delivered(...messageIds: string[]): Promise<Map<string, Record<string, any>>> {
    return waitFor(
      () => {
        const bodies = new Map(receiver.received.map((r) => [r.body['messageId'] as string, r.body]))
        return messageIds.every((id) => bodies.has(id)) ? bodies : undefined
      },
      `webhooks for ${messageIds.join(', ')}`,
    )
  }

  it("delivers the batch's context (library included) merged into each message's, the message's keys winning", async () => {
    const answer = await post(`${relay.url}/v1/batch`, {
      messageId: 'go-batch-1',
      sentAt: new Date().toISOString(),
      context: GO_CONTEXT,
      batch: [
        { type: 'track', messageId: 'go-1', userId: 'u-1', event: 'Invoice Paid', timestamp: '2024-05-01T10:00:00Z' },
        {
          type: 'identify',
          messageId: 'go-2',
          userId: 'u-1',
          traits: { plan: 'pro' },
          context: { locale: 'fr-FR', ip: '203.0.113.9' },
        },
      ],
    })
    expect(answer).toEqual({ status: 200, body: { success: true, accepted: 2, refused: [] } })
    const bodies = await delivered('go-1', 'go-2')
    expect(bodies.get('go-1')!['context']).toEqual(GO_CONTEXT)
    expect(bodies.get('go-2')!['context']).toEqual({ ...GO_CONTEXT, locale: 'fr-FR', ip: '203.0.113.9' })
  })

  it("routes by the batch's integrations under each message's, reading analytics-go's lower-case all", async () => {
    const first = await post(`${relay.url}/v1/batch`, {
      context: GO_CONTEXT,
      batch: [
        { type: 'track', messageId: 'all-off', userId: 'u', event: 'E', integrations: { all: false } },
        {
          type: 'track',
          messageId: 'all-off-but',
          userId: 'u',
          event: 'E',
          integrations: { all: false, Webhooks: true },
        },
      ],
    })
    const second = await post(`${relay.url}/v1/batch`, {
      integrations: { all: false },
      batch: [
        { type: 'track', messageId: 'batch-off', userId: 'u', event: 'E' },
        { type: 'track', messageId: 'batch-off-but', userId: 'u', event: 'E', integrations: { Webhooks: true } },
        { type: 'track', messageId: 'batch-off-all-on', userId: 'u', event: 'E', integrations: { All: true } },
      ],
    })
    expect(first.body).toEqual({ success: true, accepted: 2, refused: [] })
    expect(second.body).toEqual({ success: true, accepted: 3, refused: [] })
    await delivered('all-off-but', 'batch-off-but', 'batch-off-all-on')
    // Deliveries are written before the answer: those not in the log now never will be.
    const { body } = await adminGet(`${relay.url}/v1/deliveries?limit=100`)
    const logged = (body.deliveries as { messageId: string }[]).map((d) => d.messageId).sort()
    expect(logged).toEqual(['all-off-but', 'batch-off-all-on', 'batch-off-but'])
  })

  it('refuses, with 400, a batch whose top-level context is not an object, saying so', async () => {
    const answer = await post(`${relay.url}/v1/batch`, {
      context: 'analytics-go',
      batch: [{ type: 'track', messageId: 'x', userId: 'u', event: 'E' }],
    })
    expect(answer.status).toBe(400)
    expect(JSON.stringify(answer.body)).toContain("the batch's context must be an object")
  })

  it("delivers the classic library's numeric ids, sent through the SDK, as strings", async () => {
    const analytics = new Analytics({ writeKey: WRITE_KEY, host: relay.url, flushAt: 1 })
    analytics.identify({ userId: 42, traits: { plan: 'pro' }, messageId: 'numeric-1' } as never)
    analytics.group({ userId: 42, groupId: 7, messageId: 'numeric-2' } as never)
    await analytics.closeAndFlush()
    expect(analytics.stats()).toMatchObject({ delivered: 2, failed: 0 })
    const bodies = await delivered('numeric-1', 'numeric-2')
    expect(bodies.get('numeric-1')).toMatchObject({ type: 'identify', userId: '42' })
    expect(bodies.get('numeric-2')).toMatchObject({ type: 'group', userId: '42', groupId: '7' })
  })
})
