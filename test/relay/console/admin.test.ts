import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { request } from 'undici'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { Relay } from '../../../src/relay/index'
import { snakeCase } from '../../../src/relay/console/audiences'
import {
  admin,
  adminGet,
  post,
  type Receiver,
  startReceiver,
  startRelay,
  track,
  waitFor,
  waitForDelivery,
} from '../helpers'
import { newDatabase, STORE_KINDS } from '../../support/stores'

describe.each(STORE_KINDS)('on the %s store', (kind) => {
  let receiver: Receiver
  let other: Receiver
  let relay: Relay

  const sources = (url: string, otherUrl: string) => [
    { name: 'web', writeKey: 'wk-web', destinations: { Webhooks: { webhooks: [{ url }] } } },
    { name: 'ios', writeKey: 'wk-ios', destinations: { Webhooks: { webhooks: [{ url: otherUrl }] } } },
    { name: 'jobs', writeKey: 'wk-jobs' },
  ]

  beforeEach(async () => {
    receiver = await startReceiver()
    other = await startReceiver()
    relay = await startRelay(receiver.url, { sources: sources(receiver.url, other.url) }, kind)
  })
  afterEach(async () => {
    await receiver.close()
    await other.close()
    await relay.close()
  })

  describe('admin authentication', () => {
    it.each([
      ['no token', {}],
      ['a wrong token', { authorization: 'Bearer not-the-token' }],
      ['a write key', { authorization: `Basic ${Buffer.from('wk-web:').toString('base64')}` }],
    ])('refuses %s with 401 on every admin endpoint', async (_what, headers) => {
      expect((await post(`${relay.url}/v1/deletions`, { userId: 'u1' }, headers)).status).toBe(401)
      expect((await post(`${relay.url}/v1/audiences/vip`, { source: 'web', userIds: [] }, headers, 'PUT')).status).toBe(
        401,
      )
      expect((await post(`${relay.url}/v1/deliveries/1/retry`, {}, headers)).status).toBe(401)
      expect((await request(`${relay.url}/v1/deliveries`, { headers })).statusCode).toBe(401)
      expect(receiver.received).toEqual([])
    })

    it('is closed to everyone when no adminToken is configured', async () => {
      const closed = await startRelay(receiver.url, { adminToken: undefined }, kind)
      try {
        const answer = await post(`${closed.url}/v1/deletions`, { userId: 'u1' }, admin)
        expect(answer.status).toBe(401)
        expect(answer.body.error.message).toMatch(/no adminToken configured/)
      } finally {
        await closed.close()
      }
    })

    it('answers /healthz without a token', async () => {
      const response = await request(`${relay.url}/healthz`)
      expect(response.statusCode).toBe(200)
      expect(await response.body.json()).toEqual({ ok: true })
    })
  })

  describe('POST /v1/deletions', () => {
    it('sends { type: delete, userId, timestamp } to every source with Webhooks', async () => {
      const answer = await post(`${relay.url}/v1/deletions`, { userId: 'u-gone' }, admin)
      expect(answer).toEqual({ status: 202, body: { userId: 'u-gone', sources: ['web', 'ios'] } })
      const [web] = await waitFor(() => (receiver.received.length === 1 ? receiver.received : undefined))
      const [ios] = await waitFor(() => (other.received.length === 1 ? other.received : undefined))
      for (const { body } of [web!, ios!]) {
        expect(Object.keys(body).sort()).toEqual(['timestamp', 'type', 'userId'])
        expect(body).toMatchObject({ type: 'delete', userId: 'u-gone' })
      }
    })

    it('refuses a request without a userId', async () => {
      const answer = await post(`${relay.url}/v1/deletions`, { user: 'u1' }, admin)
      expect(answer.status).toBe(400)
      expect(answer.body.error.message).toMatch(/userId must be a non-empty string/)
    })
  })

  describe('PUT /v1/audiences/:name', () => {
    const traitsOf = (r: Receiver) =>
      Object.fromEntries(r.received.map((x) => [x.body['userId'], (x.body['traits'] as any)['high_value_users']]))

    it('sends every member on the first sync, then one identify per change with the snake_case trait', async () => {
      const first = await post(
        `${relay.url}/v1/audiences/High%20Value%20Users`,
        { source: 'web', userIds: ['a', 'b'] },
        admin,
        'PUT',
      )
      expect(first).toEqual({ status: 200, body: { added: ['a', 'b'], removed: [] } })
      await waitFor(() => (receiver.received.length === 2 ? true : undefined))
      expect(traitsOf(receiver)).toEqual({ a: true, b: true })
      expect(receiver.received[0]!.body['type']).toBe('identify')

      receiver.received.length = 0
      const second = await post(
        `${relay.url}/v1/audiences/High%20Value%20Users`,
        { source: 'web', userIds: ['b', 'c'] },
        admin,
        'PUT',
      )
      expect(second.body).toEqual({ added: ['c'], removed: ['a'] })
      await waitFor(() => (receiver.received.length === 2 ? true : undefined))
      expect(traitsOf(receiver)).toEqual({ a: false, c: true })

      // Nothing changed: nothing sent. Another source's audience of the same name is its own.
      expect(
        (
          await post(
            `${relay.url}/v1/audiences/High%20Value%20Users`,
            { source: 'web', userIds: ['c', 'b'] },
            admin,
            'PUT',
          )
        ).body,
      ).toEqual({ added: [], removed: [] })
      expect(
        (await post(`${relay.url}/v1/audiences/High%20Value%20Users`, { source: 'ios', userIds: ['b'] }, admin, 'PUT'))
          .body,
      ).toEqual({ added: ['b'], removed: [] })
    })

    it('keeps memberships in the database across restarts', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'tracklet-audience-'))
      try {
        const database = await newDatabase(kind, dir)
        const onFile = await startRelay(receiver.url, { database, sources: sources(receiver.url, other.url) }, kind)
        await post(`${onFile.url}/v1/audiences/vip`, { source: 'web', userIds: ['a', 'b'] }, admin, 'PUT')
        await onFile.close()
        const again = await startRelay(receiver.url, { database, sources: sources(receiver.url, other.url) }, kind)
        const answer = await post(`${again.url}/v1/audiences/vip`, { source: 'web', userIds: ['b'] }, admin, 'PUT')
        await again.close()
        expect(answer.body).toEqual({ added: [], removed: ['a'] })
      } finally {
        rmSync(dir, { recursive: true, force: true })
      }
    })

    it('refuses an unknown source and user ids that are not strings', async () => {
      const unknown = await post(`${relay.url}/v1/audiences/vip`, { source: 'android', userIds: [] }, admin, 'PUT')
      expect(unknown.status).toBe(400)
      expect(unknown.body.error.message).toMatch(/source must name a configured source/)
      const bad = await post(`${relay.url}/v1/audiences/vip`, { source: 'web', userIds: ['a', 7] }, admin, 'PUT')
      expect(bad.body.error.message).toBe('userIds[1] must be a non-empty string, got number 7')
    })

    it('refuses an audience name with no letter or digit to make a trait of, and stores nothing', async () => {
      for (const name of ['!!!', '%20-%20', '%C3%84%C3%96']) {
        const answer = await post(`${relay.url}/v1/audiences/${name}`, { source: 'web', userIds: ['a'] }, admin, 'PUT')
        expect(answer.status).toBe(400)
        expect(answer.body.error.code).toBe('ERR_INVALID_AUDIENCE')
        expect(answer.body.error.message).toContain('its snake_case trait name would be empty')
      }
      expect((await adminGet(`${relay.url}/v1/deliveries`)).body.deliveries).toEqual([])
    })

    it('names the trait in snake_case', () => {
      expect(snakeCase('High Value Users')).toBe('high_value_users')
      expect(snakeCase('highValueUsers')).toBe('high_value_users')
      expect(snakeCase('VIP-customers (EU)')).toBe('vip_customers_eu')
      expect(snakeCase('HTTPServerUsers')).toBe('http_server_users')
    })
  })

  describe('GET /v1/deliveries and retry', () => {
    it('lists deliveries by status with their attempts, a page at a time', async () => {
      receiver.respond((_req, res) => res.writeHead(410).end('{"error":"endpoint deleted"}'))
      await post(
        `${relay.url}/v1/batch`,
        { batch: [track({ messageId: 'gone' })] },
        { authorization: `Basic ${Buffer.from('wk-web:').toString('base64')}` },
      )
      const failed = await waitForDelivery(relay.url, 'failed', 'gone')
      expect(failed).toMatchObject({
        source: 'web',
        destination: 'Webhooks',
        type: 'track',
        lastError: `${receiver.url}: HTTP 410`,
      })
      expect(failed.attempts).toEqual([
        {
          at: expect.any(String),
          url: receiver.url,
          status: 410,
          ms: expect.any(Number),
          // What the receiver said, and what was sent (no secret: this source signs nothing).
          responseBody: '{"error":"endpoint deleted"}',
          requestHeaders: { 'User-Agent': 'Tracklet/1.0', 'Content-Type': 'application/json' },
        },
      ])
      expect((await adminGet(`${relay.url}/v1/deliveries?status=delivered`)).body.deliveries).toEqual([])

      receiver.respond((_req, res) => res.writeHead(200).end())
      for (const id of ['p1', 'p2', 'p3'])
        await post(
          `${relay.url}/v1/track`,
          { userId: 'u', event: 'E', messageId: id },
          { authorization: `Basic ${Buffer.from('wk-web:').toString('base64')}` },
        )
      // Newest first, a page at a time: `next` is the cursor of the next page, null on the last.
      const page1 = (await adminGet(`${relay.url}/v1/deliveries?limit=2`)).body
      expect(page1.deliveries.map((d: any) => d.messageId)).toEqual(['p3', 'p2'])
      const page2 = (await adminGet(`${relay.url}/v1/deliveries?limit=2&cursor=${page1.next}`)).body
      expect(page2.deliveries.map((d: any) => d.messageId)).toEqual(['p1', 'gone'])
      expect(page2.next).toBeNull()
      // The old oldest-first cursor is gone, and said so rather than ignored.
      expect((await adminGet(`${relay.url}/v1/deliveries?after=1`)).body.error.message).toMatch(
        /^unknown parameter "after"/,
      )
    })

    it('refuses an unknown status filter and an oversized page', async () => {
      expect((await adminGet(`${relay.url}/v1/deliveries?status=lost`)).body.error.message).toMatch(
        /status must be one of pending, delivered, failed/,
      )
      expect((await adminGet(`${relay.url}/v1/deliveries?limit=100000`)).status).toBe(400)
    })

    it('retries a dead-lettered delivery with a fresh window', async () => {
      receiver.respond((_req, res) => res.writeHead(400).end())
      await post(
        `${relay.url}/v1/track`,
        { userId: 'u', event: 'E', messageId: 'again' },
        { authorization: `Basic ${Buffer.from('wk-web:').toString('base64')}` },
      )
      const failed = await waitForDelivery(relay.url, 'failed', 'again')

      receiver.respond((_req, res) => res.writeHead(200).end())
      expect((await post(`${relay.url}/v1/deliveries/${failed.id}/retry`, {}, admin)).body).toEqual({
        id: failed.id,
        status: 'pending',
      })
      const delivered = await waitForDelivery(relay.url, 'delivered', 'again')
      // The log keeps the dead-lettered attempt beside the new one.
      expect(delivered.attempts.map((a: any) => a.status)).toEqual([400, 200])
      expect(receiver.received.filter((r) => r.body['messageId'] === 'again')).toHaveLength(2)

      // Only dead-lettered deliveries can be retried; unknown ids are 404.
      expect((await post(`${relay.url}/v1/deliveries/${failed.id}/retry`, {}, admin)).status).toBe(409)
      expect((await post(`${relay.url}/v1/deliveries/99999/retry`, {}, admin)).status).toBe(404)
    })
  })
})
