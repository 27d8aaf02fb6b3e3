import { request } from 'undici'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { Relay } from '../../../src/relay/index'
import { endpointId } from '../../../src/relay/store/endpoints'
import { STORE_KINDS } from '../../support/stores'
import {
  admin,
  adminGet,
  basic,
  post,
  type Receiver,
  startReceiver,
  startRelay,
  track,
  waitFor,
  waitForDelivery,
} from '../helpers'

// The operator's API at failure time (issue 20): find any delivery, replay dead letters by filter,
// see each endpoint's health and pause it. On both stores.

const HOOK_TOKEN = 'crm-s3cret-token'
// Every time of the admin API, as /v1/deliveries gives them: ISO 8601 in UTC.
const ISO_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/

describe.each(STORE_KINDS)('on the %s store', (kind) => {
  let orders: Receiver
  let crm: Receiver
  let relay: Relay
  let crmUrl: string

  beforeEach(async () => {
    orders = await startReceiver()
    crm = await startReceiver()
    crmUrl = `${crm.url}?token=${HOOK_TOKEN}`
    relay = await startRelay(
      orders.url,
      {
        breaker: { failureThreshold: 2, probeInterval: 3_600_000, maxProbeInterval: 3_600_000 },
        sources: [
          { name: 'web', writeKey: 'wk-web', destinations: { Webhooks: { webhooks: [{ url: orders.url }] } } },
          { name: 'ios', writeKey: 'wk-ios', destinations: { Webhooks: { webhooks: [{ url: crmUrl }] } } },
        ],
      },
      kind,
    )
  })
  afterEach(async () => {
    await relay.close()
    await orders.close()
    await crm.close()
  })

  const send = (writeKey: string, batch: Record<string, unknown>[]) =>
    post(`${relay.url}/v1/batch`, { batch }, { authorization: basic(writeKey) })
  const ids = (body: { deliveries: { messageId: string }[] }) => body.deliveries.map((d) => d.messageId)

  describe('GET /v1/deliveries and /v1/deliveries/:id', () => {
    it('finds by every filter, newest first, a page at a time, and one delivery by id', async () => {
      orders.respond((_req, res) => res.writeHead(500).end('{"error":"db pool exhausted"}'))
      crm.respond((_req, res) => res.writeHead(200).end())
      await send('wk-web', [
        track({ messageId: 'w1', userId: 'ada', event: 'Order Completed' }),
        { type: 'identify', messageId: 'w2', userId: 'bob', traits: {} },
      ])
      await send('wk-ios', [track({ messageId: 'i1', userId: 'ada', event: 'Signed Up' })])
      await waitForDelivery(relay.url, 'delivered', 'i1')
      const w1 = await waitFor(async () => {
        const found = (await adminGet(`${relay.url}/v1/deliveries?messageId=w1`)).body.deliveries[0]
        return found?.attempts.length > 0 ? found : undefined
      }, 'w1 to be attempted')

      const find = async (query: string) => ids((await adminGet(`${relay.url}/v1/deliveries?${query}`)).body)
      expect(await find('')).toEqual(['i1', 'w2', 'w1'])
      expect(await find('userId=ada')).toEqual(['i1', 'w1'])
      expect(await find('event=Order%20Completed')).toEqual(['w1'])
      expect(await find('type=identify')).toEqual(['w2'])
      expect(await find('source=ios')).toEqual(['i1'])
      expect(await find('status=delivered')).toEqual(['i1'])
      // A webhook URL as the endpoints list shows it (no query string), or whole.
      expect(await find(`url=${encodeURIComponent(crm.url)}`)).toEqual(['i1'])
      expect(await find(`url=${encodeURIComponent(crmUrl)}`)).toEqual(['i1'])
      expect(await find(`since=${Date.now() + 60_000}`)).toEqual([])
      expect(await find(`until=${new Date(Date.now() + 60_000).toISOString()}&userId=ada`)).toEqual(['i1', 'w1'])

      const first = (await adminGet(`${relay.url}/v1/deliveries?limit=2`)).body
      expect(ids(first)).toEqual(['i1', 'w2'])
      const second = (await adminGet(`${relay.url}/v1/deliveries?limit=2&cursor=${first.next}`)).body
      expect(second).toMatchObject({ next: null })
      expect(ids(second)).toEqual(['w1'])

      const one = await adminGet(`${relay.url}/v1/deliveries/${w1.id}`)
      expect(one.status).toBe(200)
      expect(one.body).toMatchObject({ id: w1.id, messageId: 'w1', source: 'web' })
      expect(one.body.attempts[0]).toMatchObject({ status: 500, responseBody: '{"error":"db pool exhausted"}' })
      expect((await adminGet(`${relay.url}/v1/deliveries/99999`)).status).toBe(404)
      expect((await adminGet(`${relay.url}/v1/deliveries/abc`)).status).toBe(404)
    })

    it.each([
      ['stauts=failed', /^unknown parameter "stauts"; allowed: status, /],
      ['before=100', /^unknown parameter "before"/],
      ['status=lost', /^status must be one of pending, delivered, failed/],
      ['since=last%20week', /^since must be an ISO 8601 time/],
      ['type=click', /^type must be one of/],
      ['url=https%3A%2F%2Felsewhere.example%2Fhook', /^url must be a webhook URL this relay sends to/],
      ['cursor=100', /^cursor must be the "next" of a page/],
      ['limit=0', /^limit must be an integer from 1 to 500/],
      ['userId=a&userId=b', /^parameter "userId" is given more than once$/],
    ])('answers ?%s with a 400 naming it', async (query, message) => {
      const answer = await adminGet(`${relay.url}/v1/deliveries?${query}`)
      expect(answer.status).toBe(400)
      expect(answer.body.error).toMatchObject({ code: 'ERR_INVALID_QUERY', message: expect.stringMatching(message) })
    })
  })

  describe('POST /v1/deliveries/retry', () => {
    it('counts the dead letters a filter matches on a dry run, then queues every one of them', async () => {
      orders.respond((_req, res) => res.writeHead(404).end())
      crm.respond((_req, res) => res.writeHead(404).end())
      await send('wk-web', [track({ messageId: 'a', event: 'Gone' }), track({ messageId: 'b', event: 'Gone' })])
      await send('wk-web', [track({ messageId: 'c', event: 'Kept' })])
      await send('wk-ios', [track({ messageId: 'd', event: 'Gone' })])
      for (const id of ['a', 'b', 'c', 'd']) await waitForDelivery(relay.url, 'failed', id)

      const retry = (body: unknown) => post(`${relay.url}/v1/deliveries/retry`, body, admin)
      const filter = { source: 'web', event: 'Gone' }
      expect(await retry({ filter, dryRun: true })).toEqual({ status: 200, body: { matched: 2 } })
      expect((await adminGet(`${relay.url}/v1/deliveries?status=failed`)).body.deliveries).toHaveLength(4)

      orders.respond((_req, res) => res.writeHead(200).end())
      expect(await retry({ filter })).toEqual({ status: 200, body: { matched: 2, retried: 2 } })
      for (const id of ['a', 'b']) await waitForDelivery(relay.url, 'delivered', id)
      expect(ids((await adminGet(`${relay.url}/v1/deliveries?status=failed`)).body)).toEqual(['d', 'c'])
      expect(await retry({ filter, dryRun: true })).toEqual({ status: 200, body: { matched: 0 } })
    })

    it.each([
      [{}, /^filter must be an object/],
      [{ filter: { stauts: 'failed' } }, /^unknown field "filter.stauts"/],
      [{ filter: { status: 'pending' } }, /^filter.status can only be "failed"/],
      [{ filter: {}, dryrun: true }, /^unknown field "dryrun"; allowed: filter, dryRun$/],
      [{ filter: {}, dryRun: 'yes' }, /^dryRun must be true or false$/],
      [{ filter: { since: 'tomorrow' } }, /^filter.since must be an ISO 8601 time/],
    ])('refuses %j with a 400 naming the field', async (body, message) => {
      const answer = await post(`${relay.url}/v1/deliveries/retry`, body, admin)
      expect(answer.status).toBe(400)
      expect(answer.body.error).toMatchObject({ code: 'ERR_INVALID_BODY', message: expect.stringMatching(message) })
    })
  })

  describe('GET /v1/endpoints and pause / resume', () => {
    it('shows an open endpoint with its last error, and holds a paused one until it is resumed', async () => {
      orders.respond((_req, res) => res.writeHead(503).end('{"error":"db pool exhausted"}'))
      crm.respond((_req, res) => res.writeHead(200).end())
      await send('wk-web', [track({ messageId: 'o1' }), track({ messageId: 'o2' }), track({ messageId: 'o3' })])
      const endpoints = async () =>
        (await adminGet(`${relay.url}/v1/endpoints`)).body.endpoints as {
          id: string
          url: string
          state: string
          pending: number
          lastFailure?: { at: string; status?: number; responseBody?: string }
          openedAt?: string
          nextProbeAt?: string
          sources: string[]
          recent: { delivered: number; failed: number; p50?: number; p99?: number }
        }[]
      // Requests already in flight when the circuit opened failed too (two or more). The circuit
      // opens at the failure; the requests are written with the outcomes' next batch (a moment
      // later), and the view's queries may straddle that commit: wait for both.
      const open = await waitFor(async () => {
        const found = (await endpoints()).find((e) => e.id === endpointId(orders.url))
        return found?.state === 'open' && found.recent.failed >= 2 ? found : undefined
      }, 'the orders circuit to open, with its failed requests written')
      expect(open).toMatchObject({
        url: orders.url,
        sources: ['web'],
        pending: 3,
        lastFailure: {
          at: expect.stringMatching(ISO_TIME),
          status: 503,
          responseBody: '{"error":"db pool exhausted"}',
        },
        nextProbeAt: expect.stringMatching(ISO_TIME),
        openedAt: expect.stringMatching(ISO_TIME),
        recent: { delivered: 0, failed: expect.any(Number) },
      })
      // Held back behind the open circuit: attempted when its next probe may go, as the log says.
      await waitFor(async () => {
        const pending = (await adminGet(`${relay.url}/v1/deliveries?status=pending&source=web`)).body.deliveries
        return pending.length === 3 && pending.every((d: any) => d.nextAttemptAt === open.nextProbeAt)
          ? true
          : undefined
      }, 'every pending delivery to show the next probe as its next attempt')
      const crmEndpoint = (await endpoints()).find((e) => e.id === endpointId(crmUrl))!
      expect(crmEndpoint).toMatchObject({ url: crm.url, state: 'closed', pending: 0 })
      expect(JSON.stringify(await endpoints())).not.toContain(HOOK_TOKEN)

      // Paused: nothing goes to the CRM until it is resumed, then everything does at once.
      const paused = await post(`${relay.url}/v1/endpoints/${crmEndpoint.id}/pause`, {}, admin)
      expect(paused).toEqual({ status: 200, body: { id: crmEndpoint.id, url: crm.url, state: 'paused' } })
      await send('wk-ios', [track({ messageId: 'held' })])
      await waitFor(async () => {
        const e = (await endpoints()).find((x) => x.id === crmEndpoint.id)!
        return e.state === 'paused' && e.pending === 1 ? true : undefined
      }, 'the held delivery to wait behind the pause')
      expect(crm.received).toEqual([])
      const resumed = await post(`${relay.url}/v1/endpoints/${crmEndpoint.id}/resume`, {}, admin)
      expect(resumed.body).toMatchObject({ id: crmEndpoint.id, state: 'closed' })
      await waitForDelivery(relay.url, 'delivered', 'held')

      expect((await post(`${relay.url}/v1/endpoints/${crmEndpoint.id}/resume`, {}, admin)).body.error.code).toBe(
        'ERR_NOT_PAUSED',
      )
      expect((await post(`${relay.url}/v1/endpoints/nope/pause`, {}, admin)).status).toBe(404)
      expect((await request(`${relay.url}/v1/endpoints`)).statusCode).toBe(401)
    })
  })
})
