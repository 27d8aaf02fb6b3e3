import { afterEach, describe, expect, it, vi } from 'vitest'
import { WebhookDestination, type DeliverableMessage } from '../../src/webhooks/index'
import type { Receiver, ReceiverOptions } from '../../examples/webhook-receiver.mjs'

// The example imports the package by name (built into dist/); the test runs it against the source.
vi.mock('tracklet/webhooks', () => import('../../src/webhooks/index'))
const { startReceiver } = await import('../../examples/webhook-receiver.mjs')

const message: DeliverableMessage = {
  type: 'track',
  messageId: 'm-1',
  userId: 'u-1',
  event: 'Order Completed',
  properties: { item: 'crème brûlée' },
  timestamp: '2026-01-02T03:04:05.678Z',
}

const running: Receiver[] = []
async function start(options: ReceiverOptions): Promise<Receiver> {
  const receiver = await startReceiver(options)
  running.push(receiver)
  return receiver
}
afterEach(async () => {
  await Promise.all(running.splice(0).map((receiver) => receiver.close()))
})

describe('examples/webhook-receiver.mjs', () => {
  it('accepts a signed delivery and hands over the parsed message', async () => {
    const received: unknown[] = []
    const receiver = await start({ secret: 's3cret', onMessage: (body: unknown) => received.push(body) })
    const result = await new WebhookDestination({ webhooks: [{ url: receiver.url }], sharedSecret: 's3cret' }).send(
      message,
    )
    expect(result.attempts[0]?.status).toBe(204)
    expect(received).toEqual([
      expect.objectContaining({ type: 'track', event: 'Order Completed', properties: { item: 'crème brûlée' } }),
    ])
  })

  it('refuses a delivery signed with another secret, or not signed', async () => {
    const received: unknown[] = []
    const receiver = await start({ secret: 's3cret', onMessage: (body: unknown) => received.push(body) })
    const wrong = await new WebhookDestination({ webhooks: [{ url: receiver.url }], sharedSecret: 'other' }).send(
      message,
    )
    const unsigned = await new WebhookDestination({ webhooks: [{ url: receiver.url }] }).send(message)
    expect([wrong.attempts[0]?.status, unsigned.attempts[0]?.status]).toEqual([401, 401])
    expect(received).toEqual([])
  })
})
