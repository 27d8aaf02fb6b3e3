import { afterEach, describe, expect, it } from 'vitest'
import { Analytics } from '../src/index'
import { createRelay, type Relay } from '../src/relay/index'
import { verifySignature } from '../src/webhooks/index'
import { type HttpReceiver, startHttpReceiver } from './support/http-receiver'
import { waitFor } from './support/wait-for'

// The whole path in one process, on the embedded defaults: app → Analytics → HTTP batch → relay
// (ingest → SQLite outbox → worker) → Webhooks → a receiver, which checks every signature.

const SECRET = 'end-to-end-secret'
let receiver: HttpReceiver | undefined
let relay: Relay | undefined

afterEach(async () => {
  await relay?.close()
  await receiver?.close()
  relay = receiver = undefined
})

describe('SDK → relay → receiver', () => {
  it('delivers every call type once, formatted and signed, and none that integrations turn off', async () => {
    receiver = await startHttpReceiver()
    relay = await createRelay({
      port: 0,
      database: ':memory:',
      adminToken: 'admin-e2e',
      allowPrivateNetworks: true,
      sources: [
        {
          name: 'web',
          writeKey: 'wk-e2e',
          destinations: { Webhooks: { webhooks: [{ url: `${receiver.origin}/hook` }], sharedSecret: SECRET } },
        },
      ],
    })
    const analytics = new Analytics('wk-e2e', { endpoint: relay.url, flushAt: 3 })
    const errors: Error[] = []
    analytics.on('error', (error) => errors.push(error))
    analytics.identify({ userId: 'u1', traits: { plan: 'pro' } })
    analytics.track({ userId: 'u1', event: 'Order Completed', properties: { revenue: 9.99 } })
    analytics.page({ userId: 'u1', name: 'Pricing', properties: { path: '/pricing' } })
    analytics.screen({ userId: 'u1', name: 'Home' })
    analytics.group({ userId: 'u1', groupId: 'acme', traits: { employees: 120 } })
    analytics.alias({ previousId: 'anon-7', userId: 'u1' })
    analytics.track({ userId: 'u1', event: 'Not for webhooks', integrations: { Webhooks: false } })
    await analytics.closeAndFlush()
    expect(errors).toEqual([])
    expect(analytics.stats()).toMatchObject({ delivered: 7, failed: 0 })

    const arrived = await waitFor(() => (receiver!.requests.length >= 6 ? receiver!.requests : undefined), '6 webhooks')
    for (const request of arrived) {
      expect(verifySignature(request.body, request.headers['x-signature'] as string, SECRET)).toBe(true)
    }
    const bodies = arrived.map((r) => JSON.parse(r.body.toString('utf8')) as Record<string, unknown>)
    expect(bodies.map((b) => b['type']).sort()).toEqual(['alias', 'group', 'identify', 'page', 'screen', 'track'])
    expect(bodies.find((b) => b['type'] === 'track')).toMatchObject({
      version: 1,
      userId: 'u1',
      event: 'Order Completed',
      properties: { revenue: 9.99 },
    })
    expect(bodies.find((b) => b['type'] === 'alias')).toMatchObject({ 'Previous ID': 'anon-7', 'User ID': 'u1' })
    expect(new Set(bodies.map((b) => b['messageId'])).size).toBe(6)
    // The seventh was accepted but routed nowhere: the relay wrote no delivery for it. Outcomes are
    // written in batches a moment after each answer, so wait until the log has settled all six.
    type Logged = { status: string }
    const deliveries = await waitFor(async () => {
      const log = await fetch(`${relay!.url}/v1/deliveries`, { headers: { authorization: 'Bearer admin-e2e' } })
      const page = ((await log.json()) as { deliveries: Logged[] }).deliveries
      return page.every((d) => d.status !== 'pending') ? page : undefined
    }, 'the delivery log to settle')
    expect(deliveries).toHaveLength(6)
    expect(deliveries.every((d) => d.status === 'delivered')).toBe(true)
    expect(bodies.some((b) => b['event'] === 'Not for webhooks')).toBe(false)
  })
})
