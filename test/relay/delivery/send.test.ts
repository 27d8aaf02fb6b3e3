import { describe, expect, it } from 'vitest'
import type { Destination, SendOptions } from '../../../src/relay/delivery/destination'
import { sendAttempt } from '../../../src/relay/delivery/send'
import { dueDelivery } from '../fixtures/deliveries'

const answered = { ok: true, retryable: false, attempts: [{ url: 'https://a.example/', status: 200, ms: 1 }] }

describe('one attempt', () => {
  it('sends through the destination, to a subset of its URLs only when the breaker left some out', async () => {
    const calls: (SendOptions | undefined)[] = []
    const destination: Destination = {
      urls: ['https://a.example/', 'https://b.example/'],
      send: async (_message, options) => {
        calls.push(options)
        return answered
      },
    }
    expect(await sendAttempt(destination, dueDelivery(1), undefined)).toEqual({ kind: 'sent', result: answered })
    await sendAttempt(destination, dueDelivery(1), ['https://a.example/', 'https://b.example/'])
    await sendAttempt(destination, dueDelivery(1), ['https://b.example/'])
    expect(calls).toEqual([undefined, undefined, { urls: ['https://b.example/'] }])
  })

  it('is unsent, with why, when the destination is gone or throws: no made-up request', async () => {
    expect(await sendAttempt(undefined, dueDelivery(1), undefined)).toEqual({
      kind: 'unsent',
      error: 'the source no longer has the Webhooks destination',
    })
    const throwing: Destination = { send: () => Promise.reject(new Error('cannot format')) }
    expect(await sendAttempt(throwing, dueDelivery(1), undefined)).toEqual({
      kind: 'unsent',
      error: 'the destination threw: cannot format',
    })
  })
})
