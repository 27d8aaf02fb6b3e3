import { describe, expect, expectTypeOf, it } from 'vitest'
import type { Destination, RetryPolicy } from '../../../src/relay/delivery/destination'
import { RelayConfigError } from '../../../src/relay/index'
import { validateRelayOptions } from '../../../src/relay/config/validate'
import {
  type DeliveryResult,
  nextAttemptAt,
  RETRY_WINDOW_MS,
  type RetryState,
  WebhookDestination,
} from '../../../src/webhooks/index'
import { MAX_TIMEOUT_MS } from '../../../src/webhooks/limits'

const sources = [
  { name: 'web', writeKey: 'wk', destinations: { Webhooks: { webhooks: [{ url: 'https://a.example/' }] } } },
]

describe('the boundary between the relay and the Webhooks destination', () => {
  it('is typed by the destination’s own types: its result, its requests and the retry state', () => {
    expectTypeOf<WebhookDestination>().toMatchTypeOf<Destination>()
    expectTypeOf<ReturnType<Destination['send']>>().toEqualTypeOf<Promise<DeliveryResult>>()
    expectTypeOf<Parameters<RetryPolicy['schedule']>[0]>().toEqualTypeOf<RetryState>()
    const platform: RetryPolicy = { schedule: nextAttemptAt, window: RETRY_WINDOW_MS }
    expect(platform.window).toBe(4 * 60 * 60 * 1000)
  })

  it('has one webhook timeout: the relay takes the default and the maximum the destination takes', () => {
    expect(validateRelayOptions({ sources }).webhookTimeout).toBe(5000)
    expect(validateRelayOptions({ sources, webhookTimeout: MAX_TIMEOUT_MS }).webhookTimeout).toBe(MAX_TIMEOUT_MS)
    expect(
      () => new WebhookDestination({ webhooks: [{ url: 'https://a.example/' }] }, { timeout: MAX_TIMEOUT_MS }),
    ).not.toThrow()
    expect(() => validateRelayOptions({ sources, webhookTimeout: MAX_TIMEOUT_MS + 1 })).toThrow(RelayConfigError)
  })
})
