import { describe, expect, it } from 'vitest'
import { formatStoredMessage } from '../../src/webhooks/format'
import { formatMessage, WebhookMessageError, type DeliverableMessage, type Message } from '../../src/webhooks/index'

const context = { ip: '203.0.113.7', library: { name: 'tracklet', version: '0.1.0' } }
const common = { messageId: 'msg-1', timestamp: '2026-01-02T03:04:05.678Z', context, integrations: { Webhooks: true } }

describe('formatMessage: the body per type (the platform table)', () => {
  it('page: version, type, userId, properties, timestamp (+ context, messageId)', () => {
    const properties = {
      path: '/pricing',
      referrer: 'https://example.com',
      title: 'Pricing',
      url: 'https://example.com/pricing',
      plan: 'pro',
    }
    expect(formatMessage({ ...common, type: 'page', userId: 'u-1', properties })).toEqual({
      version: 1,
      type: 'page',
      userId: 'u-1',
      properties,
      timestamp: '2026-01-02T03:04:05.678Z',
      context,
      messageId: 'msg-1',
    })
  })

  it('page and screen carry only the fields of the table (not a page name or category, nor a screen category or properties)', () => {
    expect(formatMessage({ ...common, type: 'page', userId: 'u-1', name: 'Pricing', category: 'Docs' })).toEqual({
      version: 1,
      type: 'page',
      userId: 'u-1',
      properties: {},
      timestamp: '2026-01-02T03:04:05.678Z',
      context,
      messageId: 'msg-1',
    })
    expect(
      formatMessage({ ...common, type: 'screen', userId: 'u-1', name: 'Home', category: 'Main', properties: { a: 1 } }),
    ).toEqual({
      version: 1,
      type: 'screen',
      userId: 'u-1',
      name: 'Home',
      context,
      timestamp: '2026-01-02T03:04:05.678Z',
      messageId: 'msg-1',
    })
  })

  it('screen: version, type, userId, name, context with device, os and app', () => {
    const screenContext = {
      device: { model: 'iPhone15,2', type: 'ios' },
      os: { name: 'iOS', version: '17.1' },
      app: { build: '42', name: 'Shop', version: '2.3.0' },
    }
    expect(formatMessage({ ...common, type: 'screen', userId: 'u-1', name: 'Home', context: screenContext })).toEqual({
      version: 1,
      type: 'screen',
      userId: 'u-1',
      name: 'Home',
      context: screenContext,
      timestamp: '2026-01-02T03:04:05.678Z',
      messageId: 'msg-1',
    })
  })

  it('identify: version, type, userId, traits, timestamp', () => {
    const traits = { email: 'ada@example.com', name: 'Ada', subscriptionPlan: 'premium', friendCount: 29 }
    expect(formatMessage({ ...common, type: 'identify', userId: 'u-1', traits })).toEqual({
      version: 1,
      type: 'identify',
      userId: 'u-1',
      traits,
      timestamp: '2026-01-02T03:04:05.678Z',
      context,
      messageId: 'msg-1',
    })
  })

  it('track: version, type, userId, event, properties, timestamp', () => {
    const properties = { revenue: '39.95', shippingMethod: '2-day' }
    expect(formatMessage({ ...common, type: 'track', userId: 'u-1', event: 'Order Completed', properties })).toEqual({
      version: 1,
      type: 'track',
      userId: 'u-1',
      event: 'Order Completed',
      properties,
      timestamp: '2026-01-02T03:04:05.678Z',
      context,
      messageId: 'msg-1',
    })
  })

  it('alias: the keys "Previous ID" and "User ID", literally, and no userId/previousId', () => {
    const body = formatMessage({ ...common, type: 'alias', previousId: 'anon-9', userId: 'u-1' })
    expect(body).toEqual({
      version: 1,
      type: 'alias',
      'Previous ID': 'anon-9',
      'User ID': 'u-1',
      timestamp: '2026-01-02T03:04:05.678Z',
      context,
      messageId: 'msg-1',
    })
    expect(JSON.stringify(body)).toContain('"Previous ID":"anon-9","User ID":"u-1"')
  })

  it('group: version, type, userId, groupId, traits, timestamp', () => {
    const traits = { name: 'Initech', industry: 'Technology', plan: 'enterprise', employees: 329, 'total billed': 830 }
    expect(formatMessage({ ...common, type: 'group', userId: 'u-1', groupId: 'g-1', traits })).toEqual({
      version: 1,
      type: 'group',
      userId: 'u-1',
      groupId: 'g-1',
      traits,
      timestamp: '2026-01-02T03:04:05.678Z',
      context,
      messageId: 'msg-1',
    })
  })

  it('delete: exactly type, userId and timestamp — no version, no messageId', () => {
    const body = formatMessage({
      type: 'delete',
      userId: 'u-1',
      timestamp: '2026-01-02T03:04:05.678Z',
      messageId: 'del-1',
    })
    expect(body).toEqual({ type: 'delete', userId: 'u-1', timestamp: '2026-01-02T03:04:05.678Z' })
    expect(Object.keys(body)).toEqual(['type', 'userId', 'timestamp'])
  })

  it('the table comes first in its order (version, type, …), then the extras', () => {
    const body = formatMessage({ ...common, type: 'track', userId: 'u-1', anonymousId: 'anon-9', event: 'Signed Up' })
    expect(Object.keys(body)).toEqual([
      'version',
      'type',
      'userId',
      'event',
      'properties',
      'timestamp',
      'context',
      'anonymousId',
      'messageId',
    ])
  })
})

describe('formatMessage: common rules', () => {
  it('normalises timestamps to ISO 8601 UTC with milliseconds', () => {
    const body = formatMessage({
      type: 'track',
      messageId: 'm',
      userId: 'u',
      event: 'E',
      timestamp: '2026-01-02T05:04:05+02:00',
    })
    expect(body['timestamp']).toBe('2026-01-02T03:04:05.000Z')
    const deletion = formatMessage({ type: 'delete', userId: 'u', timestamp: '2026-01-02T03:04:05.1234567Z' })
    expect(deletion['timestamp']).toBe('2026-01-02T03:04:05.123Z')
  })

  it('carries anonymousId and sends empty traits/properties as {}', () => {
    expect(
      formatMessage({ type: 'identify', messageId: 'm', anonymousId: 'anon-9', timestamp: common.timestamp }),
    ).toEqual({
      version: 1,
      type: 'identify',
      traits: {},
      timestamp: common.timestamp,
      anonymousId: 'anon-9',
      messageId: 'm',
    })
  })

  it('never forwards integrations (routing flags) or unknown fields', () => {
    const message: Message = {
      ...common,
      type: 'track',
      userId: 'u',
      event: 'E',
      sentAt: '2026-01-02T03:04:06Z',
      extra: 1,
    }
    const body = formatMessage(message)
    expect(body).not.toHaveProperty('integrations')
    expect(body).not.toHaveProperty('extra')
  })

  it('does not change the message it formats', () => {
    const message: Message = { ...common, type: 'page', userId: 'u', timestamp: '2026-01-02T05:04:05+02:00' }
    const before = structuredClone(message)
    formatMessage(message)
    expect(message).toEqual(before)
  })

  it.each<[string, unknown, RegExp]>([
    ['an unknown type', { ...common, type: 'purchase', userId: 'u' }, /type must be one of/],
    ['a track without event', { ...common, type: 'track', userId: 'u' }, /track needs event/],
    [
      'a timestamp without a zone',
      { ...common, type: 'track', userId: 'u', event: 'E', timestamp: '2026-01-02T03:04:05' },
      /timestamp must be an ISO 8601 string/,
    ],
    ['no timestamp', { type: 'identify', userId: 'u', messageId: 'm' }, /timestamp/],
    ['a delete without userId', { type: 'delete', timestamp: common.timestamp }, /delete message needs userId/],
    ['not an object', 'track', /must be an object/],
  ])('refuses %s with a WebhookMessageError', (_case, message, problem) => {
    const format = (): unknown => formatMessage(message as DeliverableMessage)
    expect(format).toThrow(WebhookMessageError)
    expect(format).toThrow(problem)
  })
})

describe('formatMessage and receivedAt', () => {
  it('forwards when the relay took the message in, normalised, on every type but delete', () => {
    const track = formatMessage({
      type: 'track',
      userId: 'u1',
      event: 'E',
      timestamp: '2026-01-01T00:00:00Z',
      receivedAt: '2026-01-01T00:00:01.5+00:00',
    } as never)
    expect(track['receivedAt']).toBe('2026-01-01T00:00:01.500Z')
    const removal = formatMessage({
      type: 'delete',
      userId: 'u1',
      timestamp: '2026-01-01T00:00:00Z',
      receivedAt: '2026-01-01T00:00:01Z',
    } as never)
    expect(removal).toEqual({ type: 'delete', userId: 'u1', timestamp: '2026-01-01T00:00:00.000Z' })
  })
})

describe('formatStoredMessage: what the relay sends from its outbox', () => {
  const stored: DeliverableMessage[] = [
    { ...common, type: 'page', userId: 'u', properties: { path: '/' } },
    { ...common, type: 'screen', userId: 'u', name: 'Home' },
    { ...common, type: 'identify', anonymousId: 'a', traits: { plan: 'pro' } },
    { ...common, type: 'track', userId: 'u', event: 'E', timestamp: '2026-01-02T05:04:05+02:00' },
    { ...common, type: 'alias', userId: 'u', previousId: 'p' },
    { ...common, type: 'group', userId: 'u', groupId: 'g' },
    { type: 'delete', userId: 'u', timestamp: '2026-01-02T03:04:05.1234567Z' },
    { ...common, type: 'track', userId: 'u', event: 'E', receivedAt: '2026-01-02T03:04:06.000Z' } as never,
    { ...common, type: 'track', userId: 'u', event: 'E', timestamp: new Date(Date.UTC(2026, 0, 2)) } as never,
  ]

  it.each(stored.map((message) => [message.type, message] as const))(
    '%s: the same body, byte for byte, as formatMessage gives',
    (_type, message) => {
      expect(JSON.stringify(formatStoredMessage(message))).toBe(JSON.stringify(formatMessage(message)))
    },
  )

  it.each<[string, unknown, RegExp]>([
    ['an unknown type', { ...common, type: 'purchase', userId: 'u' }, /type must be one of/],
    [
      'a day that does not exist, written as the relay writes times',
      { ...common, type: 'track', userId: 'u', event: 'E', timestamp: '2026-02-30T00:00:00.000Z' },
      /timestamp must be an ISO 8601 string/,
    ],
    ['no timestamp', { type: 'identify', userId: 'u', messageId: 'm' }, /timestamp/],
    ['a delete without userId', { type: 'delete', timestamp: common.timestamp }, /delete message needs userId/],
    ['not an object', 'track', /must be an object/],
  ])('refuses %s, which it cannot format, with a WebhookMessageError', (_case, message, problem) => {
    const format = (): unknown => formatStoredMessage(message as DeliverableMessage)
    expect(format).toThrow(WebhookMessageError)
    expect(format).toThrow(problem)
  })

  it('sends a canonical receivedAt as it is, and normalises any other', () => {
    const at = (receivedAt: string) =>
      formatStoredMessage({ ...common, type: 'track', userId: 'u', event: 'E', receivedAt } as never)['receivedAt']
    expect(at('2026-01-02T03:04:06.000Z')).toBe('2026-01-02T03:04:06.000Z')
    expect(at('2026-01-02T05:04:06+02:00')).toBe('2026-01-02T03:04:06.000Z')
    expect(at('2026-02-30T00:00:00.000Z')).toBeUndefined()
  })
})
