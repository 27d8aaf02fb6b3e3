import type { Dispatcher } from 'undici'
import { describe, expectTypeOf, it } from 'vitest'
import {
  Analytics,
  type AnalyticsError,
  type AnalyticsErrorCode,
  type AnalyticsOptions,
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
    expectTypeOf<Analytics['closeAndFlush']>().parameters.toEqualTypeOf<[({ timeout?: number } | undefined)?]>()
    expectTypeOf<Analytics['stats']>().returns.toEqualTypeOf<AnalyticsStats>()
    expectTypeOf<AnalyticsStats>().toEqualTypeOf<{
      queued: number
      inFlight: number
      delivered: number
      failed: number
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
      'ERR_INVALID_MESSAGE' | 'ERR_MESSAGE_TOO_LARGE' | 'ERR_QUEUE_FULL' | 'ERR_CLOSED' | 'ERR_DELIVERY'
    >()
    expectTypeOf<AnalyticsError['analyticsMessage']>().toEqualTypeOf<Message>()
    expectTypeOf<DeliveryError['status']>().toEqualTypeOf<number | undefined>()
    expectTypeOf<DeliveryError>().toExtend<AnalyticsError>()
  })
})
