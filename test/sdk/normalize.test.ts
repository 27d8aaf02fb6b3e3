import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { Analytics } from '../../src/index'
import { normalizeMessage } from '../../src/sdk/normalize'
import { MOCK_ENDPOINT, type MockApi, mockApi } from './helpers/mock-api'
import { settled } from './helpers/settle'

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/
const ISO_UTC_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

describe('normalizeMessage', () => {
  it('adds type, a UUID messageId, an ISO UTC timestamp and context.library', () => {
    const message = normalizeMessage('track', { userId: '42', event: 'Viewed' }, undefined)
    expect(message).toEqual({
      userId: '42',
      event: 'Viewed',
      type: 'track',
      messageId: expect.stringMatching(UUID) as unknown,
      timestamp: expect.stringMatching(ISO_UTC_MS) as unknown,
      context: { library: { name: 'tracklet', version: '0.1.0' } },
    })
    expect(message).not.toHaveProperty('integrations')
  })

  it('keeps a given messageId and the instant of a given Date or ISO string', () => {
    const date = new Date(Date.UTC(2020, 4, 6, 7, 8, 9, 10))
    expect(normalizeMessage('identify', { userId: 'u', messageId: 'm-1', timestamp: date }, undefined)).toMatchObject({
      messageId: 'm-1',
      timestamp: '2020-05-06T07:08:09.010Z',
    })
    expect(
      normalizeMessage('identify', { userId: 'u', timestamp: '2020-05-06T09:08:09+02:00' }, undefined).timestamp,
    ).toBe('2020-05-06T07:08:09.000Z')
  })

  it('merges context.library into the given context, without touching it', () => {
    const context = { ip: '1.2.3.4', library: { name: 'spoofed', version: '9' } }
    const message = normalizeMessage('page', { userId: 'u', context }, undefined)
    expect(message.context).toEqual({ ip: '1.2.3.4', library: { name: 'tracklet', version: '0.1.0' } })
    expect(context.library.name).toBe('spoofed')
  })

  it("merges the call's integrations over the client's defaults", () => {
    const defaults = { All: false, Webhooks: true }
    expect(
      normalizeMessage(
        'track',
        { userId: 'u', event: 'e', integrations: { Webhooks: false, Mixpanel: true } },
        defaults,
      ).integrations,
    ).toEqual({ All: false, Webhooks: false, Mixpanel: true })
    expect(normalizeMessage('track', { userId: 'u', event: 'e' }, defaults).integrations).toEqual(defaults)
  })
})

describe('calls', () => {
  let api: MockApi
  let analytics: Analytics

  beforeEach(() => {
    api = mockApi()
    analytics = new Analytics('key', { endpoint: MOCK_ENDPOINT, dispatcher: api.agent, integrations: { All: false } })
  })

  afterEach(async () => {
    await analytics.closeAndFlush()
    await api.agent.close()
  })

  it('sends every call type with its fields', async () => {
    analytics.identify({ userId: '42', traits: { plan: 'pro' } })
    analytics.track({ userId: '42', event: 'Order Completed', properties: { revenue: '9.99' } })
    analytics.page({ userId: '42', name: 'Pricing', properties: { path: '/pricing' } })
    analytics.screen({ anonymousId: 'a1', name: 'Home' })
    analytics.group({ userId: '42', groupId: 'acme', traits: { employees: 120 } })
    analytics.alias({ previousId: 'anon-7', userId: '42' })
    analytics.track({ anonymousId: 'a1', event: 'Viewed', integrations: { Webhooks: true } })
    await analytics.flush()
    const sent = api.messages()
    expect(sent.map((message) => message['type'])).toEqual([
      'identify',
      'track',
      'page',
      'screen',
      'group',
      'alias',
      'track',
    ])
    expect(sent[0]).toMatchObject({ userId: '42', traits: { plan: 'pro' }, integrations: { All: false } })
    expect(sent[4]).toMatchObject({ groupId: 'acme', traits: { employees: 120 } })
    expect(sent[5]).toMatchObject({ previousId: 'anon-7', userId: '42' })
    expect(sent[6]).toMatchObject({ integrations: { All: false, Webhooks: true } })
    expect(new Set(sent.map((message) => message['messageId'])).size).toBe(7)
  })

  it('snapshots the message at the call: later mutation changes nothing sent', async () => {
    const properties: Record<string, unknown> = { revenue: '9.99', items: ['a'] }
    const { callback, result } = settled()
    analytics.track({ userId: '42', event: 'Order Completed', properties }, callback)
    properties['revenue'] = '0.00'
    ;(properties['items'] as string[]).push('b')
    await analytics.flush()
    const { err, message } = await result
    expect(err).toBeUndefined()
    expect(message.properties).toEqual({ revenue: '9.99', items: ['a'] })
    expect(api.bodies[0]).toContain('"properties":{"revenue":"9.99","items":["a"]}')
  })

  it('gives the callback the message as sent, with its messageId', async () => {
    const { callback, result } = settled()
    analytics.identify({ userId: '42', messageId: 'my-id' }, callback)
    await analytics.flush()
    const { message } = await result
    expect(message).toMatchObject({ type: 'identify', messageId: 'my-id', userId: '42' })
    expect(JSON.parse(api.bodies[0]!).batch[0]).toEqual(message)
  })
})
