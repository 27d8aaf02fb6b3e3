import { afterEach, describe, expect, it } from 'vitest'
import { STORE_KINDS, type StoreKind } from '../../support/stores'
import { adminGet, basic, post, startReceiver, startRelay, track, waitFor } from '../helpers'
import { api, webhooksTo } from '../sources/api-client'

// A tracking plan set through the admin API (docs/plans.md, docs/relay.md "Sources through the
// API"): checked like a file's, and a plan replaced through the API applies from the next message.

const PLAN = {
  events: {
    'Order Completed': {
      properties: { type: 'object', properties: { revenue: { type: 'number' } }, required: ['revenue'] },
    },
  },
}

describe.each(STORE_KINDS)('a tracking plan through the admin API on %s', (kind: StoreKind) => {
  const cleanups: (() => Promise<void>)[] = []
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
  })

  it('blocks what breaks it, then lets the next message through once the plan is replaced', async () => {
    const receiver = await startReceiver()
    cleanups.push(() => receiver.close())
    const relay = await startRelay(receiver.url, {}, kind)
    cleanups.push(() => relay.close())

    const created = await api(relay.url, 'PUT', '/v1/sources/shop', {
      ...webhooksTo(receiver.url),
      schema: { plan: PLAN, violations: 'block' },
    })
    expect(created.status).toBe(201)
    // Shown as it was given: a plan is not a secret.
    expect(created.body.schema).toMatchObject({ plan: PLAN, violations: 'block' })
    const key = created.body.writeKey as string
    const send = (messageId: string) =>
      post(
        `${relay.url}/v1/batch`,
        { batch: [track({ event: 'Order Completed', properties: { revenue: 'ten' }, messageId })] },
        { authorization: basic(key) },
      )

    expect((await send('blocked-1')).status).toBe(200)
    const violations = await waitFor(async () => {
      const page = (await adminGet(`${relay.url}/v1/violations?source=shop`)).body
      return page.violations.length > 0 ? page.violations : undefined
    }, 'the violation recorded')
    expect(violations[0]).toMatchObject({ messageId: 'blocked-1', kind: 'type', path: '/properties/revenue' })

    // The same source, its plan now letting violations through (the ETag it was shown).
    const replaced = await api(
      relay.url,
      'PUT',
      '/v1/sources/shop',
      { ...webhooksTo(receiver.url), schema: { plan: PLAN, violations: 'allow' } },
      { 'if-match': created.headers.etag as string },
    )
    expect(replaced.status).toBe(200)
    expect((await send('allowed-2')).status).toBe(200)
    await waitFor(() => (receiver.received.length > 0 ? true : undefined), 'a delivery')
    expect(receiver.received.map((r) => r.body['messageId'])).toEqual(['allowed-2'])
  })

  it('refuses a schema that does not compile, naming its path, and stores nothing', async () => {
    const receiver = await startReceiver()
    cleanups.push(() => receiver.close())
    const relay = await startRelay(receiver.url, {}, kind)
    cleanups.push(() => relay.close())
    const refused = await api(relay.url, 'PUT', '/v1/sources/shop', {
      ...webhooksTo(receiver.url),
      schema: { plan: { events: { Bad: { properties: { type: 'objekt' } } } } },
    })
    expect(refused.status).toBe(400)
    expect(refused.text).toContain('schema.plan.events')
    expect((await api(relay.url, 'GET', '/v1/sources/shop')).status).toBe(404)
  })
})
