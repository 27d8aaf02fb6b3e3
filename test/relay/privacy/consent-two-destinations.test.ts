import { afterEach, describe, expect, it, vi } from 'vitest'
import { createRelay, type Relay } from '../../../src/relay/index'
import { STORE_KINDS, throwawayDatabase } from '../../support/stores'
import { ADMIN_TOKEN, post, type Receiver, startReceiver, track, waitFor, WRITE_KEY } from '../helpers'
import { recorded } from '../destinations/recorder'
import { openStream } from '../live/stream/stream-client'

// The tests' second destination joins the registry, so one source has two destinations.
vi.mock('../../../src/relay/destinations/index', async (original) => {
  const real = await original<typeof import('../../../src/relay/destinations/index')>()
  const { recorder: second } = await import('../destinations/recorder')
  return { DESTINATIONS: [...real.DESTINATIONS, second] }
})

// A consent rule withholds a message from its own destination only (docs/privacy.md, "Consent").
describe.each(STORE_KINDS)('consent with two destinations on a source (%s)', (kind) => {
  let relay: Relay | undefined
  let receiver: Receiver | undefined
  afterEach(async () => {
    await relay?.close()
    await receiver?.close()
    relay = undefined
    recorded.reset()
  })

  it('withholds from the destination whose categories are refused, as filtered (consent) for it alone', async () => {
    receiver = await startReceiver()
    relay = await createRelay({
      port: 0,
      database: await throwawayDatabase(kind),
      adminToken: ADMIN_TOKEN,
      allowPrivateNetworks: true,
      sources: [
        {
          name: 'web',
          writeKey: WRITE_KEY,
          destinations: {
            Webhooks: { webhooks: [{ url: receiver.url }], consent: { categories: ['Advertising'] } },
            Recorder: { maxMessages: 1, maxWaitMs: 0, consent: { categories: ['Analytics'] } },
          },
        },
      ],
    })
    const stream = await openStream(relay.url, 'kinds=filtered')
    const withConsent = (preferences: Record<string, boolean>, messageId: string) =>
      track({ messageId, context: { consent: { categoryPreferences: preferences } } })
    await post(`${relay.url}/v1/batch`, {
      batch: [
        withConsent({ Advertising: true, Analytics: false }, 'ads-only'),
        withConsent({ Advertising: false, Analytics: true }, 'analytics-only'),
        withConsent({ Advertising: true, Analytics: true }, 'both'),
      ],
    })
    await waitFor(() => (receiver!.received.length === 2 ? true : undefined), 'two webhooks')
    await waitFor(() => (recorded.batches.flat().length === 2 ? true : undefined), 'two recorded')
    expect(receiver.received.map((r) => r.body['messageId']).sort()).toEqual(['ads-only', 'both'])
    expect(
      recorded.batches
        .flat()
        .map((m) => m.message['messageId'])
        .sort(),
    ).toEqual(['analytics-only', 'both'])
    const withheld = await waitFor(
      () => (stream.events.length === 2 ? stream.events.map((e) => e.data) : undefined),
      'two filtered events',
    )
    stream.close()
    expect(withheld.map((e) => [e.messageId, e.destination, e.reason]).sort()).toEqual([
      ['ads-only', 'Recorder', 'consent'],
      ['analytics-only', 'Webhooks', 'consent'],
    ])
  })
})
