import { request } from 'undici'
import { afterEach, describe, expect, it } from 'vitest'
import type { RelayOptions } from '../../../src/relay/index'
import { STORE_KINDS, type StoreKind } from '../../support/stores'
import { ADMIN_TOKEN, admin, adminGet, post, startReceiver, startRelay, track, waitFor, WRITE_KEY } from '../helpers'
import { parseExposition, sampleValue } from '../telemetry/prometheus'
import { PageClient } from '../console/page-client'
import { openStream } from '../live/stream/stream-client'

// Tracking plans at ingest (docs/plans.md): each action on each kind of violation, on both
// stores, as a client and a receiver see it.

const ORDER_SCHEMA = {
  type: 'object',
  properties: {
    revenue: { type: 'number' },
    currency: { type: 'string', enum: ['EUR', 'USD'] },
    address: { type: 'object', properties: { zip: { type: 'string' }, city: { type: 'string' } } },
  },
  required: ['revenue'],
  additionalProperties: false,
}
const PLAN = {
  events: { 'Order Completed': { properties: ORDER_SCHEMA } },
  identify: { traits: { type: 'object', properties: { email: { type: 'string', format: 'email' } } } },
}

type Schema = { unplanned?: 'allow' | 'block'; violations?: 'allow' | 'omit' | 'block' }

describe.each(STORE_KINDS)('tracking plans on %s', (kind: StoreKind) => {
  const cleanups: (() => Promise<void>)[] = []
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
  })

  async function relayWith(schema: Schema, overrides: Partial<RelayOptions> = {}) {
    const receiver = await startReceiver()
    cleanups.push(() => receiver.close())
    const relay = await startRelay(
      receiver.url,
      {
        sources: [
          {
            name: 'web',
            writeKey: WRITE_KEY,
            destinations: { Webhooks: { webhooks: [{ url: receiver.url }] } },
            schema: { plan: PLAN, ...schema },
          },
        ],
        ...overrides,
      },
      kind,
    )
    cleanups.push(() => relay.close())
    const send = (batch: Record<string, unknown>[]) => post(`${relay.url}/v1/batch`, { batch })
    const violations = async (query = '') => (await adminGet(`${relay.url}/v1/violations${query}`)).body
    const deliveries = async () => (await adminGet(`${relay.url}/v1/deliveries?limit=500`)).body.deliveries as any[]
    return { relay, receiver, send, violations, deliveries }
  }

  const order = (properties: Record<string, unknown>, messageId: string) =>
    track({ event: 'Order Completed', properties, messageId })

  it('allow: records each violation with its kind and path, and delivers the message as sent', async () => {
    const { send, violations, receiver, relay } = await relayWith({})
    const answer = await send([
      order({ revenue: '9.99', coupon: 'X', currency: 'GBP' }, 'm-1'),
      order({ currency: 'EUR' }, 'm-2'),
      track({ event: 'Unplanned Thing', messageId: 'm-3' }),
      order({ revenue: 10 }, 'm-ok'),
      { type: 'page', userId: 'u1', name: 'Home', properties: { revenue: 'not checked' }, messageId: 'm-page' },
    ])
    expect(answer).toEqual({ status: 200, body: { success: true, accepted: 5, refused: [] } })
    const page = await violations()
    const shown = (page.violations as any[]).map((v) => [v.messageId, v.kind, v.path])
    expect(shown).toEqual(
      expect.arrayContaining([
        ['m-1', 'type', '/properties/revenue'],
        ['m-1', 'additional', '/properties/coupon'],
        ['m-1', 'other', '/properties/currency'],
        ['m-2', 'required', '/properties/revenue'],
        ['m-3', 'unplanned', '/event'],
      ]),
    )
    expect(shown).toHaveLength(5)
    expect(page.next).toBeUndefined()
    expect(page.violations[0]).toMatchObject({ source: 'web', type: 'track', at: expect.any(String) })
    const required = (page.violations as any[]).find((v) => v.kind === 'required')
    expect(required).toMatchObject({ event: 'Order Completed', message: 'required property "revenue" is missing' })
    await waitFor(() => (receiver.received.length === 5 ? true : undefined), 'five deliveries')
    const bodyOf = (id: string) => receiver.received.find((r) => r.body['messageId'] === id)!.body
    expect(bodyOf('m-1')['properties']).toEqual({ revenue: '9.99', coupon: 'X', currency: 'GBP' })
    const metrics = await request(`${relay.url}/metrics`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })
    const samples = parseExposition(await metrics.body.text())
    expect(sampleValue(samples, 'tracklet_violations_total', { source: 'web', kind: 'type' })).toBe(1)
    expect(sampleValue(samples, 'tracklet_violations_total', { source: 'web', kind: 'unplanned' })).toBe(1)
    expect(sampleValue(samples, 'tracklet_violations_total', { source: 'web', kind: 'additional' })).toBe(1)
  })

  it('omit: removes the offending leaf properties and traits (not their parents), recording a required one it removes; a missing required one goes on as sent', async () => {
    const { send, violations, receiver } = await relayWith({ violations: 'omit' })
    await send([
      order({ revenue: '9.99', coupon: 'X', address: { zip: 75001, city: 'Paris' } }, 'm-1'),
      order({ currency: 'EUR' }, 'm-2'),
      { type: 'identify', userId: 'u1', traits: { email: 'not-an-email', plan: 'pro' }, messageId: 'm-id' },
      { type: 'group', userId: 'u1', groupId: 'g', traits: { anything: 1 }, messageId: 'm-group' },
    ])
    await waitFor(() => (receiver.received.length === 4 ? true : undefined), 'four deliveries')
    const bodyOf = (id: string) => receiver.received.find((r) => r.body['messageId'] === id)!.body
    expect(bodyOf('m-1')['properties']).toEqual({ address: { city: 'Paris' } })
    expect(bodyOf('m-2')['properties']).toEqual({ currency: 'EUR' })
    expect(bodyOf('m-id')['traits']).toEqual({ plan: 'pro' })
    // No plan for group: its traits are not checked.
    expect(bodyOf('m-group')['traits']).toEqual({ anything: 1 })
    const paths = ((await violations()).violations as any[]).map((v) => `${v.messageId} ${v.kind} ${v.path}`).sort()
    expect(paths).toEqual([
      'm-1 additional /properties/coupon',
      // Taken out for its type, the required revenue is missing from what is delivered: recorded.
      'm-1 required /properties/revenue',
      'm-1 type /properties/address/zip',
      'm-1 type /properties/revenue',
      'm-2 required /properties/revenue',
      'm-id other /traits/email',
    ])
  })

  it('block: acknowledges a message that breaks the plan, writes no delivery for it, and counts it filtered', async () => {
    const { send, deliveries, violations, relay } = await relayWith({ violations: 'block' })
    const answer = await send([
      order({ revenue: 'nine' }, 'm-bad'),
      order({ revenue: 9 }, 'm-good'),
      // Unplanned, but `unplanned` is allow: it goes on (recorded) whatever `violations` says.
      track({ event: 'Something Else', messageId: 'm-unplanned' }),
    ])
    expect(answer.body).toEqual({ success: true, accepted: 3, refused: [] })
    await waitFor(async () => ((await deliveries()).length === 2 ? true : undefined), 'two deliveries')
    expect((await deliveries()).map((d) => d.messageId).sort()).toEqual(['m-good', 'm-unplanned'])
    expect(((await violations()).violations as any[]).map((v) => v.kind).sort()).toEqual(['type', 'unplanned'])
    const metrics = await request(`${relay.url}/metrics`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })
    const samples = parseExposition(await metrics.body.text())
    expect(sampleValue(samples, 'tracklet_messages_filtered_total', { source: 'web' })).toBe(1)
    expect(sampleValue(samples, 'tracklet_messages_ingested_total', { source: 'web' })).toBe(3)
  })

  it('unplanned: block drops a track event the plan does not list, and records it', async () => {
    const { send, deliveries, violations } = await relayWith({ unplanned: 'block' })
    await send([track({ event: 'Not Planned', messageId: 'm-x' }), order({ revenue: 1 }, 'm-ok')])
    await waitFor(async () => ((await deliveries()).length === 1 ? true : undefined), 'one delivery')
    expect((await deliveries()).map((d) => d.messageId)).toEqual(['m-ok'])
    expect((await violations('?kind=unplanned')).violations).toEqual([
      expect.objectContaining({ messageId: 'm-x', event: 'Not Planned', path: '/event' }),
    ])
  })

  it("erases a user's violations with their deletion, and keeps the others", async () => {
    const { send, violations, relay } = await relayWith({})
    await send([track({ event: 'X', userId: 'gone', messageId: 'm-gone' }), track({ event: 'Y', messageId: 'm-kept' })])
    expect((await violations()).violations).toHaveLength(2)
    expect((await post(`${relay.url}/v1/deletions`, { userId: 'gone' }, admin)).status).toBe(202)
    expect(((await violations()).violations as any[]).map((v) => v.messageId)).toEqual(['m-kept'])
  })

  it('pages and filters the violations, newest first, and refuses an unknown or malformed parameter', async () => {
    const { send, violations, relay } = await relayWith({})
    await send([1, 2, 3, 4, 5].map((n) => order({ revenue: String(n) }, `m-${n}`)))
    await send([track({ event: 'Other', messageId: 'm-other' })])
    const first = await violations('?limit=2&event=Order%20Completed')
    expect((first.violations as any[]).map((v) => v.messageId)).toEqual(['m-5', 'm-4'])
    const second = await violations(`?limit=2&event=Order%20Completed&cursor=${first.next}`)
    expect((second.violations as any[]).map((v) => v.messageId)).toEqual(['m-3', 'm-2'])
    const last = await violations(`?limit=2&event=Order%20Completed&cursor=${second.next}`)
    expect((last.violations as any[]).map((v) => v.messageId)).toEqual(['m-1'])
    expect(last.next).toBeUndefined()
    expect((await violations('?kind=unplanned&source=web')).violations).toHaveLength(1)
    expect((await violations('?since=2000-01-01T00:00:00Z')).violations).toHaveLength(6)
    expect((await violations(`?since=${Date.now() + 60_000}`)).violations).toHaveLength(0)
    const refusals: [string, string][] = [
      ['?status=failed', 'unknown parameter "status"'],
      ['?kind=bad', 'kind must be one of unplanned, required, type, additional, other'],
      ['?cursor=nope', 'cursor'],
      ['?limit=0', 'limit'],
    ]
    for (const [query, problem] of refusals) {
      const answer = await adminGet(`${relay.url}/v1/violations${query}`)
      expect(answer.status).toBe(400)
      expect(answer.body.error).toMatchObject({ code: 'ERR_INVALID_QUERY', message: expect.stringContaining(problem) })
    }
    expect((await request(`${relay.url}/v1/violations`)).statusCode).toBe(401)
  })

  it('shows the violations on the operator page: counts per kind for each source and event, and the newest', async () => {
    const { send, relay } = await relayWith({})
    await send([
      order({ revenue: 'x' }, 'm-1'),
      order({ revenue: 'y', coupon: 'c' }, 'm-2'),
      track({ event: '<b>Other</b>', messageId: 'm-3' }),
    ])
    const page = new PageClient(relay.url)
    expect((await page.get('/ui/violations')).status).toBe(200)
    expect((await page.get('/ui/violations')).body).toContain('Sign in')
    await page.signIn()
    const shown = await page.get('/ui/violations')
    expect(shown.status).toBe(200)
    const orderRow = /<tr>\s*<td>web<\/td>\s*<td><a href="[^"]*">Order Completed<\/a><\/td>([\s\S]*?)<\/tr>/.exec(
      shown.body,
    )
    // unplanned, required, type, additional, other
    expect([...orderRow![1]!.matchAll(/<td class="num">(\d+)<\/td>/g)].map((m) => Number(m[1]))).toEqual([
      0, 0, 2, 1, 0,
    ])
    expect(shown.body).toContain('&lt;b&gt;Other&lt;/b&gt;')
    expect(shown.body).toContain('/properties/coupon')
    const one = await page.get('/ui/violations?source=web&event=Order%20Completed')
    expect(one.body).toContain('m-2')
    expect(one.body).not.toContain('m-3')
    expect((await page.get('/ui/violations?kind=x')).status).toBe(400)
  })

  it('streams each violation as a violation event, and a message the plan blocks as a filtered event', async () => {
    const { send, relay } = await relayWith({ violations: 'block' })
    const reader = await openStream(relay.url, 'kinds=violation,filtered')
    cleanups.push(async () => reader.close())
    expect(reader.status).toBe(200)
    await send([order({ revenue: 'x' }, 'm-bad')])
    const violation = await reader.next((e) => e.kind === 'violation', 'a violation event')
    expect(violation.data).toEqual({
      at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      source: 'web',
      messageId: 'm-bad',
      type: 'track',
      event: 'Order Completed',
      kind: 'type',
      path: '/properties/revenue',
      message: 'must be number',
    })
    const filtered = await reader.next((e) => e.kind === 'filtered', 'a filtered event')
    expect(filtered.data).toMatchObject({
      source: 'web',
      messageId: 'm-bad',
      reason: expect.stringContaining('tracking plan'),
    })
  })
})
