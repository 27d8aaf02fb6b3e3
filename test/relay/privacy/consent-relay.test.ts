import { afterEach, describe, expect, it } from 'vitest'
import type { ConsentSetting } from '../../../src/relay/features/privacy/consent'
import type { Relay } from '../../../src/relay/index'
import { STORE_KINDS, type StoreKind } from '../../support/stores'
import { adminGet, basic, post, type Receiver, startReceiver, startRelay, track, waitFor, WRITE_KEY } from '../helpers'
import { api, webhooksTo } from '../sources/api-client'
import { openStream } from '../live/stream/stream-client'

// A destination's consent rule on a real relay (docs/privacy.md, "Consent"), from the config file
// and through the admin API.

const consented = (preferences: Record<string, boolean>, messageId: string) =>
  track({ messageId, context: { consent: { categoryPreferences: preferences } } })

describe.each(STORE_KINDS)('consent on a relay (%s)', (kind: StoreKind) => {
  const closing: (() => Promise<void>)[] = []
  afterEach(async () => {
    for (const close of closing.splice(0).reverse()) await close()
  })

  async function relayWithConsent(consent: ConsentSetting): Promise<{ relay: Relay; receiver: Receiver }> {
    const receiver = await startReceiver()
    const Webhooks = { webhooks: [{ url: receiver.url }], consent }
    const relay = await startRelay(
      receiver.url,
      { sources: [{ name: 'web', writeKey: WRITE_KEY, destinations: { Webhooks } }] },
      kind,
    )
    closing.push(
      () => receiver.close(),
      () => relay.close(),
    )
    return { relay, receiver }
  }

  const storedIds = async (relay: Relay) =>
    ((await adminGet(`${relay.url}/v1/deliveries?limit=500`)).body.deliveries as any[]).map((d) => d.messageId).sort()

  it('sends only what consents to every listed category; withholds the rest as filtered (consent)', async () => {
    const { relay, receiver } = await relayWithConsent({ categories: ['Advertising', 'Analytics'] })
    const stream = await openStream(relay.url, 'kinds=filtered')
    closing.push(async () => stream.close())
    const answer = await post(`${relay.url}/v1/batch`, {
      batch: [
        consented({ Advertising: true, Analytics: true }, 'both'),
        consented({ Advertising: true }, 'one-missing'),
        consented({ Advertising: true, Analytics: false }, 'one-refused'),
        track({ messageId: 'no-context' }),
        { ...consented({ Advertising: false, Analytics: true }, 'named-true'), integrations: { Webhooks: true } },
      ],
    })
    expect(answer.body).toEqual({ success: true, accepted: 5, refused: [] })
    await waitFor(() => (receiver.received.length === 2 ? true : undefined), 'two deliveries')
    expect(await storedIds(relay)).toEqual(['both', 'no-context'])
    const withheld = await waitFor(
      () => (stream.events.length === 3 ? stream.events.map((e) => e.data) : undefined),
      'three filtered events',
    )
    expect(withheld.map((e) => [e.messageId, e.reason, e.destination])).toEqual([
      ['one-missing', 'consent', 'Webhooks'],
      ['one-refused', 'consent', 'Webhooks'],
      ['named-true', 'consent', 'Webhooks'],
    ])
  })

  it('withholds a message without consent context when the rule is required', async () => {
    const { relay } = await relayWithConsent({ categories: ['Analytics'], required: true })
    await post(`${relay.url}/v1/batch`, {
      batch: [track({ messageId: 'no-context' }), consented({ Analytics: true }, 'given')],
    })
    expect(await storedIds(relay)).toEqual(['given'])
  })

  it('takes a consent rule through the admin API, and applies it to that source', async () => {
    const { relay } = await relayWithConsent({ categories: ['Analytics'] })
    const created = await api(
      relay.url,
      'PUT',
      '/v1/sources/shop',
      webhooksTo('http://127.0.0.1:9/none', { consent: { categories: ['Marketing'], required: true } }),
    )
    expect(created.status).toBe(201)
    expect(created.body.destinations.Webhooks.consent).toEqual({ categories: ['Marketing'], required: true })
    const key = created.body.writeKey as string
    await post(
      `${relay.url}/v1/batch`,
      { batch: [track({ messageId: 's-none' }), consented({ Marketing: true }, 's-given')] },
      { authorization: basic(key) },
    )
    const shop = (await adminGet(`${relay.url}/v1/deliveries?source=shop`)).body.deliveries as any[]
    expect(shop.map((d) => d.messageId)).toEqual(['s-given'])
    const refused = await api(
      relay.url,
      'PUT',
      '/v1/sources/bad',
      webhooksTo('http://127.0.0.1:9/none', { consent: {} }),
    )
    expect(refused.status).toBe(400)
    expect(JSON.stringify(refused.body)).toContain('destinations.Webhooks.consent.categories')
  })
})
