import { subscribe, unsubscribe } from 'node:diagnostics_channel'
import { afterEach, describe, expect, it } from 'vitest'
import { Analytics, type RequestEvent, type ResponseEvent } from '../../src/index'
import { type Receiver, startReceiver, status } from './helpers/receiver'

let receiver: Receiver
const subscriptions: [string, (message: unknown) => void][] = []

afterEach(async () => {
  for (const [name, listener] of subscriptions.splice(0)) unsubscribe(name, listener)
  await receiver.close()
})

function listen<T>(name: string): T[] {
  const events: T[] = []
  const listener = (message: unknown): void => {
    events.push(message as T)
  }
  subscribe(name, listener)
  subscriptions.push([name, listener])
  return events
}

describe('diagnostics channels', () => {
  it('publish each request and its answer on tracklet:request and tracklet:response, retries included', async () => {
    receiver = await startReceiver((request, response, index) =>
      index === 0 ? status(503)(request, response, index) : response.end('{}'),
    )
    const requests = listen<RequestEvent>('tracklet:request')
    const responses = listen<ResponseEvent>('tracklet:response')
    const analytics = new Analytics('k', { endpoint: receiver.endpoint })
    analytics.track({ userId: 'u', event: 'a' })
    analytics.track({ userId: 'u', event: 'b' })
    await analytics.closeAndFlush()
    const url = `${receiver.endpoint}/v1/batch`
    const bytes = receiver.requests[0]!.body.length
    expect(requests).toEqual([
      { url, messages: 2, bytes, attempt: 1 },
      { url, messages: 2, bytes: expect.any(Number), attempt: 2 },
    ])
    expect(responses).toEqual([
      { url, messages: 2, status: 503, ms: expect.any(Number) },
      { url, messages: 2, status: 200, ms: expect.any(Number) },
    ])
    expect(analytics.stats()).toMatchObject({ requests: 2, retries: 1 })
  })

  it('give the error of a request that got no answer', async () => {
    receiver = await startReceiver()
    const { endpoint } = receiver
    await receiver.close()
    receiver = await startReceiver() // closed in afterEach; the client posts to the closed one
    const responses = listen<ResponseEvent>('tracklet:response')
    const analytics = new Analytics('k', { endpoint, maxRetries: 0 })
    analytics.track({ userId: 'u', event: 'a' })
    await analytics.closeAndFlush()
    expect(responses).toEqual([
      {
        url: `${endpoint}/v1/batch`,
        messages: 1,
        error: expect.objectContaining({ code: 'ECONNREFUSED' }),
        ms: expect.any(Number),
      },
    ])
  })
})
