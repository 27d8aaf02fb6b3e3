import type { Dispatcher } from 'undici'
import { describe, expectTypeOf, it } from 'vitest'
import {
  Analytics,
  type AnalyticsError,
  type AnalyticsErrorCode,
  type AnalyticsOptions,
  type AnalyticsSettings,
  type AnalyticsStats,
  type DeliveryError,
  type Message,
  type MessageCallback,
  type TrackParams,
} from '../../src/index'

// Compile-time checks: `npm run typecheck` fails when a public signature drifts. The `it` blocks
// make vitest count them; the assertions themselves are checked by tsc.
describe('public types', () => {
  it('calls take their params and an optional callback, and return void', () => {
    expectTypeOf<Analytics['track']>().parameters.toEqualTypeOf<[TrackParams, MessageCallback?]>()
    expectTypeOf<Analytics['identify']>().returns.toEqualTypeOf<void>()
    expectTypeOf<Analytics['alias']>().parameter(0).toHaveProperty('previousId').toEqualTypeOf<string>()
    expectTypeOf<Analytics['group']>().parameter(0).toHaveProperty('groupId').toEqualTypeOf<string>()
    expectTypeOf<MessageCallback>().parameters.toEqualTypeOf<[AnalyticsError | undefined, Message]>()
  })

  it('refuses calls missing their required fields at compile time', () => {
    const analytics = new Analytics('k', { endpoint: 'http://127.0.0.1:9' })
    // @ts-expect-error track needs event
    expectTypeOf(analytics.track).toBeCallableWith({ userId: 'u' })
    // @ts-expect-error alias needs previousId
    expectTypeOf(analytics.alias).toBeCallableWith({ userId: 'u' })
    expectTypeOf(analytics.track).toBeCallableWith({ anonymousId: 'a', event: 'e' }, (err) => err?.code)
    void analytics.closeAndFlush({ timeout: 1 })
  })

  it('flush and closeAndFlush return Promise<void>; stats returns counters', () => {
    expectTypeOf<Analytics['flush']>().returns.toEqualTypeOf<Promise<void>>()
    expectTypeOf<Analytics['flush']>().parameters.toEqualTypeOf<[({ timeout?: number | undefined } | undefined)?]>()
    expectTypeOf<Analytics['closeAndFlush']>().parameters.toEqualTypeOf<
      [({ timeout?: number | undefined } | undefined)?]
    >()
    expectTypeOf<Analytics['stats']>().returns.toEqualTypeOf<AnalyticsStats>()
    expectTypeOf<AnalyticsStats>().toEqualTypeOf<{
      queued: number
      inFlight: number
      delivered: number
      failed: number
      filtered: number
      requests: number
      retries: number
      bytesSent: number
      disabled?: true
    }>()
  })

  it('options take the Go aliases and an undici dispatcher', () => {
    expectTypeOf<AnalyticsOptions>().toHaveProperty('size').toEqualTypeOf<number | undefined>()
    expectTypeOf<AnalyticsOptions>().toHaveProperty('flushAfter').toEqualTypeOf<number | undefined>()
    expectTypeOf<AnalyticsOptions>().toHaveProperty('dispatcher').toEqualTypeOf<Dispatcher | undefined>()
    expectTypeOf<Analytics['size']>().toEqualTypeOf<number>()
  })

  it('errors carry a stable code, the message and, for delivery, the status', () => {
    expectTypeOf<AnalyticsError['code']>().toEqualTypeOf<AnalyticsErrorCode>()
    expectTypeOf<AnalyticsErrorCode>().toEqualTypeOf<
      | 'ERR_INVALID_MESSAGE'
      | 'ERR_MESSAGE_TOO_LARGE'
      | 'ERR_QUEUE_FULL'
      | 'ERR_CLOSED'
      | 'ERR_DELIVERY'
      | 'ERR_FILTERED'
    >()
    expectTypeOf<AnalyticsError['analyticsMessage']>().toEqualTypeOf<Message>()
    expectTypeOf<DeliveryError['status']>().toEqualTypeOf<number | undefined>()
    expectTypeOf<DeliveryError>().toExtend<AnalyticsError>()
  })

  it("takes Segment's constructor form and option names, typed", () => {
    expectTypeOf(Analytics).toBeConstructibleWith('k')
    expectTypeOf(Analytics).toBeConstructibleWith('k', { host: 'http://127.0.0.1:8787', path: '/v1/batch' })
    expectTypeOf(Analytics).toBeConstructibleWith({ writeKey: 'k', maxEventsInBatch: 1, httpRequestTimeout: 5 })
    expectTypeOf(Analytics).toBeConstructibleWith({ writeKey: 'k', interval: 1000, disable: true })
    // @ts-expect-error Segment's form needs the write key
    expectTypeOf(Analytics).toBeConstructibleWith({ host: 'http://127.0.0.1:8787' })
    // @ts-expect-error an unknown option (misspelt host) is refused at compile time too
    expectTypeOf(Analytics).toBeConstructibleWith('k', { hots: 'http://127.0.0.1:8787' })
    expectTypeOf<AnalyticsSettings['writeKey']>().toEqualTypeOf<string>()
    expectTypeOf<ConstructorParameters<typeof Analytics>[1]>().toEqualTypeOf<AnalyticsOptions | undefined>()
  })

  it('takes interface- and class-typed properties, traits and context', () => {
    interface OrderProperties {
      revenue: number
      currency: string
    }
    class Traits {
      plan = 'pro'
      seats = 3
    }
    interface Device {
      id: string
    }
    const properties: OrderProperties = { revenue: 9.99, currency: 'EUR' }
    const traits = new Traits()
    const context: { device: Device } = { device: { id: 'd' } }
    const analytics = new Analytics('k', { disable: true })
    analytics.track({ userId: 'u', event: 'Order Completed', properties, context })
    analytics.identify({ userId: 'u', traits })
    analytics.group({ userId: 'u', groupId: 'g', traits })
    analytics.page({ anonymousId: 'a', properties })
    // @ts-expect-error a string is not an object of properties
    expectTypeOf(analytics.track).toBeCallableWith({ userId: 'u', event: 'e', properties: 'x' })
  })

  it('takes optional fields given as undefined (exactOptionalPropertyTypes is on here)', () => {
    const maybe = (): string | undefined => undefined
    const analytics = new Analytics('k', { disable: true, endpoint: maybe() })
    analytics.track({ userId: maybe(), anonymousId: 'a', event: 'e', properties: undefined, context: undefined })
    analytics.page({ userId: 'u', name: maybe(), category: maybe(), timestamp: undefined, messageId: maybe() })
    analytics.alias({ previousId: 'p', userId: 'u', anonymousId: maybe() })
  })

  it('refuses, at compile time, a literal call with neither userId nor anonymousId', () => {
    const analytics = new Analytics('k', { disable: true })
    // @ts-expect-error neither userId nor anonymousId
    expectTypeOf(analytics.track).toBeCallableWith({ event: 'e' })
    // @ts-expect-error neither userId nor anonymousId
    expectTypeOf(analytics.identify).toBeCallableWith({ traits: { plan: 'pro' } })
    // @ts-expect-error neither userId nor anonymousId
    expectTypeOf(analytics.group).toBeCallableWith({ groupId: 'g' })
    // @ts-expect-error both may be undefined
    expectTypeOf(analytics.page).toBeCallableWith({ userId: 'u' as string | undefined })
    expectTypeOf(analytics.screen).toBeCallableWith({ anonymousId: 'a' })
    expectTypeOf(analytics.identify).toBeCallableWith({ userId: 'u', anonymousId: 'a' })
  })
})
