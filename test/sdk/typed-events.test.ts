import { describe, expectTypeOf, it } from 'vitest'
import { Analytics, type TrackParams, type TrackParamsFor } from '../../src/index'

// An event map as `tracklet typegen` writes one from a tracking plan.
type Events = {
  'Order Completed': { revenue: number; currency?: string }
  'Signed Up': { plan?: 'free' | 'pro' }
}

// `npm run typecheck` compiles this file: each `@ts-expect-error` fails the check if its line
// compiles, so a call that breaks the plan provably does not.
function calls(analytics: Analytics<Events>): void {
  analytics.track({ userId: 'u', event: 'Order Completed', properties: { revenue: 9.99 } })
  analytics.track({ userId: 'u', event: 'Order Completed', properties: { revenue: 9.99, currency: 'EUR' } })
  analytics.track({ anonymousId: 'a', event: 'Signed Up' })
  analytics.track({ userId: 'u', event: 'Signed Up', properties: { plan: 'pro' } })
  // @ts-expect-error an unplanned event name
  analytics.track({ userId: 'u', event: 'Order Complete', properties: { revenue: 1 } })
  // @ts-expect-error a property of the wrong type
  analytics.track({ userId: 'u', event: 'Order Completed', properties: { revenue: '9.99' } })
  // @ts-expect-error a required property missing
  analytics.track({ userId: 'u', event: 'Order Completed', properties: { currency: 'EUR' } })
  // @ts-expect-error properties left out where the plan requires some
  analytics.track({ userId: 'u', event: 'Order Completed' })
  // @ts-expect-error a property the plan does not have
  analytics.track({ userId: 'u', event: 'Signed Up', properties: { plan: 'pro', coupon: 'X' } })
  // @ts-expect-error an identity is still required
  analytics.track({ event: 'Signed Up' })
  // The other calls are not typed by the map.
  analytics.identify({ userId: 'u', traits: { anything: true } })
}

function untyped(analytics: Analytics): void {
  analytics.track({ userId: 'u', event: 'Anything', properties: { at: 'all' } })
}

describe('Analytics<Events>', () => {
  it('types track by the event map, and leaves a client without one as it was', () => {
    expectTypeOf(calls).toBeFunction()
    expectTypeOf(untyped).toBeFunction()
    expectTypeOf<TrackParamsFor<Record<string, Record<string, unknown>>>>().toEqualTypeOf<TrackParams>()
    expectTypeOf<Parameters<Analytics['track']>[0]>().toEqualTypeOf<TrackParams>()
    expectTypeOf<Parameters<Analytics<Events>['track']>[0]['event']>().toEqualTypeOf<'Order Completed' | 'Signed Up'>()
    expectTypeOf(new Analytics<Events>('k', { disable: true })).toHaveProperty('track')
  })
})
