import { MockAgent } from 'undici'
import { describe, expect, it, vi } from 'vitest'
import { sendAttempt } from '../../../src/relay/delivery/send'
import { type SendsOne, webhookSender } from '../../../src/relay/destinations/webhooks/sender'
import { WebhookDestination } from '../../../src/webhooks/index'
import { SEND_STORED, type SendsStored } from '../../../src/webhooks/stored'
import { dueDelivery } from '../fixtures/deliveries'
import { retries } from '../fixtures/worker'

const through = (destination: SendsOne) => webhookSender(destination, retries())

const answered = { ok: true, retryable: false, attempts: [{ url: 'https://a.example/', status: 200, ms: 1 }] }

describe('one attempt', () => {
  it('sends through the destination, to a subset of its URLs only when the breaker left some out', async () => {
    const calls: ({ urls?: readonly string[] } | undefined)[] = []
    const destination = through({
      urls: ['https://a.example/', 'https://b.example/'],
      send: async (_message, options) => {
        calls.push(options)
        return answered
      },
    })
    expect(await sendAttempt(destination, dueDelivery(1), undefined)).toEqual({
      kind: 'sent',
      outcome: { kind: 'delivered', requests: answered.attempts },
    })
    await sendAttempt(destination, dueDelivery(1), ['https://a.example/', 'https://b.example/'])
    await sendAttempt(destination, dueDelivery(1), ['https://b.example/'])
    expect(calls).toEqual([undefined, undefined, { urls: ['https://b.example/'] }])
  })

  it('is unsent when the destination is gone, and a final failure when it throws: no made-up request', async () => {
    expect(await sendAttempt(undefined, dueDelivery(1), undefined)).toEqual({
      kind: 'unsent',
      error: 'the source no longer has the Webhooks destination',
    })
    const throwing = through({ send: () => Promise.reject(new Error('cannot format')) })
    expect(await sendAttempt(throwing, dueDelivery(1), undefined)).toEqual({
      kind: 'sent',
      outcome: { kind: 'failed', retryable: false, error: 'the destination threw: cannot format' },
    })
  })

  it('through the Webhooks destination: a stored message is sent formatted, one it cannot format is unsent with why', async () => {
    const agent = new MockAgent()
    agent.disableNetConnect()
    const bodies: unknown[] = []
    agent
      .get('https://hooks.example')
      .intercept({ path: '/in', method: 'POST', body: (body) => bodies.push(JSON.parse(body)) > 0 })
      .reply(200, 'ok')
      .persist()
    const webhooks = through(
      new WebhookDestination({ webhooks: [{ url: 'https://hooks.example/in' }] }, { dispatcher: agent }),
    )
    try {
      const sent = await sendAttempt(webhooks, dueDelivery(1), undefined)
      expect(sent).toMatchObject({ kind: 'sent', outcome: { kind: 'delivered' } })
      expect(bodies).toEqual([
        {
          version: 1,
          type: 'track',
          userId: 'u',
          event: 'E',
          properties: {},
          timestamp: '2026-01-01T00:00:00.000Z',
          messageId: 'm1',
        },
      ])

      const unknownType = {
        ...dueDelivery(2),
        message: { type: 'purchase', userId: 'u', timestamp: '2026-01-01T00:00:00.000Z' },
      }
      const noInstant = {
        ...dueDelivery(3),
        message: { ...dueDelivery(3).message, timestamp: '2026-02-30T00:00:00.000Z' },
      }
      expect(await sendAttempt(webhooks, unknownType as never, undefined)).toEqual({
        kind: 'sent',
        outcome: {
          kind: 'failed',
          retryable: false,
          error: expect.stringMatching(
            /^the destination threw: Cannot format the message for the Webhooks destination: type must be one of .*, got "purchase"$/,
          ),
        },
      })
      expect(await sendAttempt(webhooks, noInstant, undefined)).toEqual({
        kind: 'sent',
        outcome: {
          kind: 'failed',
          retryable: false,
          error:
            'the destination threw: Cannot format the message for the Webhooks destination: timestamp must be an ISO 8601 string with a time zone, got "2026-02-30T00:00:00.000Z"',
        },
      })
      expect(bodies).toHaveLength(1)
    } finally {
      await agent.close()
    }
  })

  it("sends a stored message through the destination's stored path, not the validating send", async () => {
    const webhooks = new WebhookDestination({ webhooks: [{ url: 'https://hooks.example/in' }] })
    const stored = vi
      .spyOn(webhooks as unknown as SendsStored, SEND_STORED)
      .mockResolvedValue({ ok: true, retryable: false, attempts: [] })
    const send = vi.spyOn(webhooks, 'send')
    try {
      expect(await sendAttempt(through(webhooks), dueDelivery(1), undefined)).toMatchObject({ kind: 'sent' })
      expect(stored).toHaveBeenCalledTimes(1)
      expect(send).not.toHaveBeenCalled()
    } finally {
      stored.mockRestore()
    }
  })
})
