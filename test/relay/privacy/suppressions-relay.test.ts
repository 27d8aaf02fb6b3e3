import { request } from 'undici'
import { afterEach, describe, expect, it } from 'vitest'
import type { Relay } from '../../../src/relay/index'
import { STORE_KINDS, type StoreKind } from '../../support/stores'
import {
  ADMIN_TOKEN,
  admin,
  adminGet,
  basic,
  post,
  type Receiver,
  startReceiver,
  startRelay,
  track,
  waitFor,
} from '../helpers'
import { api } from '../sources/api-client'
import { parseExposition, sampleValue } from '../telemetry/prometheus'
import { openStream } from '../live/stream/stream-client'

// Suppression through the admin API on a real relay (docs/privacy.md, "Suppression").

const READ_TOKEN = 'read-token-for-privacy-tests'
const SHOP_KEY = 'wk-test-shop'

describe.each(STORE_KINDS)('suppressions on a relay (%s)', (kind: StoreKind) => {
  const closing: (() => Promise<void>)[] = []
  afterEach(async () => {
    for (const close of closing.splice(0).reverse()) await close()
  })

  // Sources `web` and `shop`, both sending to one receiver.
  async function relayWithTwoSources(): Promise<{ relay: Relay; receiver: Receiver }> {
    const receiver = await startReceiver()
    const webhooks = { webhooks: [{ url: receiver.url }] }
    const relay = await startRelay(
      receiver.url,
      {
        readToken: READ_TOKEN,
        sources: [
          { name: 'web', writeKey: 'wk-test-web', destinations: { Webhooks: webhooks } },
          { name: 'shop', writeKey: SHOP_KEY, destinations: { Webhooks: webhooks } },
        ],
      },
      kind,
    )
    closing.push(
      () => receiver.close(),
      () => relay.close(),
    )
    return { relay, receiver }
  }

  const suppress = (relay: Relay, body: unknown) => api(relay.url, 'POST', '/v1/suppressions', body)
  const deliveredIds = async (relay: Relay) =>
    ((await adminGet(`${relay.url}/v1/deliveries?limit=500`)).body.deliveries as any[]).map((d) => d.messageId).sort()

  it('acknowledges and drops a suppressed user’s messages, counted and streamed as filtered (suppressed)', async () => {
    const { relay, receiver } = await relayWithTwoSources()
    const stream = await openStream(relay.url, 'kinds=filtered')
    closing.push(async () => stream.close())
    expect(await suppress(relay, { userIds: ['gone'] })).toMatchObject({ status: 200, body: { added: 1 } })
    const answer = await post(`${relay.url}/v1/batch`, {
      batch: [track({ userId: 'gone', messageId: 'm-gone' }), track({ userId: 'kept', messageId: 'm-kept' })],
    })
    expect(answer.body).toEqual({ success: true, accepted: 2, refused: [] })
    await waitFor(() => (receiver.received.length === 1 ? true : undefined), 'the kept message delivered')
    expect(receiver.received[0]!.body['messageId']).toBe('m-kept')
    expect(await deliveredIds(relay)).toEqual(['m-kept'])
    const filtered = await stream.next((e) => e.data.messageId === 'm-gone', 'the filtered event')
    expect(filtered.data).toMatchObject({ source: 'web', reason: 'suppressed' })
    const metrics = await request(`${relay.url}/metrics`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })
    const samples = parseExposition(await metrics.body.text())
    expect(sampleValue(samples, 'tracklet_messages_filtered_total', { source: 'web' })).toBe(1)
    expect(sampleValue(samples, 'tracklet_messages_ingested_total', { source: 'web' })).toBe(2)
  })

  it('suppresses for one source or for every source, lists them, and lifts them', async () => {
    const { relay } = await relayWithTwoSources()
    await suppress(relay, { userIds: ['web-only'], source: 'web' })
    await suppress(relay, { userIds: ['everywhere'] })
    const listed = await api(relay.url, 'GET', '/v1/suppressions')
    expect(listed.body.suppressions).toEqual([
      { userId: 'web-only', source: 'web', at: expect.any(String) },
      { userId: 'everywhere', at: expect.any(String) },
    ])
    expect((await api(relay.url, 'GET', '/v1/suppressions?source=web')).body.suppressions).toEqual([
      expect.objectContaining({ userId: 'web-only' }),
    ])
    const send = (writeKey: string, userId: string, messageId: string) =>
      post(`${relay.url}/v1/batch`, { batch: [track({ userId, messageId })] }, { authorization: basic(writeKey) })
    await send('wk-test-web', 'web-only', 'w1')
    await send(SHOP_KEY, 'web-only', 's1')
    await send(SHOP_KEY, 'everywhere', 's2')
    await waitFor(async () => ((await deliveredIds(relay)).length === 1 ? true : undefined), 'one delivery')
    expect(await deliveredIds(relay)).toEqual(['s1'])

    expect((await api(relay.url, 'DELETE', '/v1/suppressions/web-only?source=web')).body).toEqual({
      userId: 'web-only',
      removed: 1,
    })
    expect((await api(relay.url, 'DELETE', '/v1/suppressions/everywhere')).status).toBe(200)
    const missing = await api(relay.url, 'DELETE', '/v1/suppressions/everywhere')
    expect(missing.status).toBe(404)
    expect(missing.body.error.code).toBe('ERR_NOT_FOUND')
    // Lifted: the next messages go, on this relay at once.
    await send('wk-test-web', 'web-only', 'w2')
    await send(SHOP_KEY, 'everywhere', 's3')
    expect(await deliveredIds(relay)).toEqual(['s1', 's3', 'w2'])
    const audit = (await api(relay.url, 'GET', '/v1/audit?limit=10')).body.entries as any[]
    expect(audit.map((e) => [e.action, e.target, e.actor])).toEqual([
      ['suppression.removed', 'everywhere', 'admin'],
      ['suppression.removed', 'web-only', 'admin'],
      ['suppression.added', 'everywhere', 'admin'],
      ['suppression.added', 'web-only', 'admin'],
    ])
  })

  it('refuses fewer than 1 or more than 5,000 ids, and other mistakes, naming the field', async () => {
    const { relay } = await relayWithTwoSources()
    const refused = async (body: unknown) => {
      const answer = await suppress(relay, body)
      expect(answer.status).toBe(400)
      return answer.body.error.message as string
    }
    expect(await refused({ userIds: [] })).toMatch('userIds must be an array of 1 to 5000 user ids, got an array of 0')
    const many = Array.from({ length: 5001 }, (_, i) => `u${i}`)
    expect(await refused({ userIds: many })).toMatch('got an array of 5001')
    expect(await refused({ userIds: ['a', ''] })).toMatch('userIds[1] must be a non-empty string')
    expect(await refused({ userIds: ['a'], source: 'nope' })).toMatch('source: must name a configured source')
    expect(await refused({ userIds: ['a'], erase: 'yes' })).toMatch('erase must be true or false')
    expect(await refused({ userIds: ['a'], sources: 'web' })).toMatch('"sources" is not a field')
    expect(await refused({ userIds: ['a\u0000b'] })).toMatch('NUL')
    // Nothing of a refused call was written.
    expect((await api(relay.url, 'GET', '/v1/suppressions')).body).toEqual({ suppressions: [] })
    // 5,000 is allowed.
    expect((await suppress(relay, { userIds: many.slice(0, 5000) })).body).toEqual({ added: 5000 })
  })

  it('lets the read token list, never change', async () => {
    const { relay } = await relayWithTwoSources()
    const read = (method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown) =>
      api(relay.url, method, path, body, {}, READ_TOKEN)
    expect((await read('GET', '/v1/suppressions')).status).toBe(200)
    expect((await read('POST', '/v1/suppressions', { userIds: ['a'] })).status).toBe(403)
    expect((await read('DELETE', '/v1/suppressions/a')).status).toBe(403)
    expect((await api(relay.url, 'GET', '/v1/suppressions', undefined, {}, 'wrong')).status).toBe(401)
  })

  it('erase: true also erases the user as POST /v1/deletions does, so no replay sends them again', async () => {
    const { relay, receiver } = await relayWithTwoSources()
    await post(`${relay.url}/v1/batch`, {
      batch: [track({ userId: 'gone', messageId: 'g1' }), track({ userId: 'kept', messageId: 'k1' })],
    })
    // Settled first: erasure leaves a delivery still pending to be sent as it is (docs/replay.md).
    await waitFor(async () => {
      const { body } = await adminGet(`${relay.url}/v1/deliveries?status=delivered`)
      return body.deliveries.length === 2 ? true : undefined
    }, 'both delivered')
    expect((await suppress(relay, { userIds: ['gone', 'also-gone', 'gone'], erase: true })).body).toEqual({
      added: 2,
      erased: 2,
    })
    // A delete message per user for each source with Webhooks, as a deletion sends.
    await waitFor(
      () => (receiver.received.filter((r) => r.body['type'] === 'delete').length === 4 ? true : undefined),
      'the delete messages',
    )
    const erased = (await adminGet(`${relay.url}/v1/deliveries?messageId=g1`)).body.deliveries[0]
    expect(erased.message).toEqual({ type: 'track', messageId: 'g1', erased: true })
    // Sent after the suppression, never stored: a replay finds none of their tracks (g1 is erased,
    // g2 never stored; the delete messages are what is sent).
    await post(`${relay.url}/v1/batch`, { batch: [track({ userId: 'gone', messageId: 'g2' })] })
    const window = { since: '1h', until: new Date(Date.now() + 60_000).toISOString() }
    const dry = await post(
      `${relay.url}/v1/replays`,
      { filter: { ...window, userId: 'gone', type: 'track' }, dryRun: true },
      admin,
    )
    expect(dry.body).toEqual({ matched: 0 })
    expect(JSON.stringify((await adminGet(`${relay.url}/v1/deliveries?limit=500`)).body)).not.toContain('g2')
  })
})
