import { describe, expect, expectTypeOf, it } from 'vitest'
import type { DestinationSender, MessageOutcome, RetryPolicy } from '../../../src/relay/destinations/destination'
import { DESTINATIONS } from '../../../src/relay/destinations/index'
import { webhooks, WEBHOOK_RETRIES } from '../../../src/relay/destinations/webhooks/index'
import { RelayConfigError } from '../../../src/relay/index'
import { validateRelayOptions } from '../../../src/relay/config/validate'
import { type RetryState, WebhookDestination } from '../../../src/webhooks/index'
import { MAX_TIMEOUT_MS } from '../../../src/webhooks/limits'

const sources = [
  { name: 'web', writeKey: 'wk', destinations: { Webhooks: { webhooks: [{ url: 'https://a.example/' }] } } },
]

describe('the boundary between the relay and its destinations', () => {
  it('is typed by the interface: a batch in, one outcome per message out, the retry state', () => {
    expectTypeOf<ReturnType<DestinationSender['sendBatch']>>().toEqualTypeOf<Promise<readonly MessageOutcome[]>>()
    expectTypeOf<Parameters<RetryPolicy['schedule']>[0]>().toEqualTypeOf<RetryState>()
    expect(WEBHOOK_RETRIES.window).toBe(4 * 60 * 60 * 1000)
  })

  it('lists Webhooks as a module whose URLs are its targets, one message at a time', () => {
    expect(DESTINATIONS.map((d) => d.name)).toContain('Webhooks')
    const settings = webhooks.parseSettings({ webhooks: [{ url: 'https://a.example/' }] }, 'here')
    const sender = webhooks.create(settings, {
      source: 'web',
      relayId: 'r1',
      agent: undefined as never,
      limits: { timeout: 1000, responseBodyLimit: 0 },
    })
    expect(sender.targets).toEqual(['https://a.example/'])
    expect(sender.batching).toEqual({ maxMessages: 1, maxWaitMs: 0 })
    expect(sender.retries).toBe(WEBHOOK_RETRIES)
  })

  it("names the Webhooks module's problems by their path, and its secrets", () => {
    expect(() => webhooks.parseSettings({ webhooks: [{ url: 'ftp://a.example/' }] }, 'sources[0].x')).toThrow(
      expect.objectContaining({ field: 'sources[0].x.webhooks[0].url' }),
    )
    const settings = webhooks.parseSettings(
      { webhooks: [{ url: 'https://a.example/', headers: { 'X-Key': 'k3y' } }], sharedSecret: 's3cret' },
      'here',
    )
    expect(webhooks.secrets(settings).sort()).toEqual(['k3y', 's3cret'])
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
