import { createHmac } from 'node:crypto'
import { request } from 'undici'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { Relay } from '../../../src/relay/index'
import { STORE_KINDS } from '../../support/stores'
import {
  ADMIN_TOKEN,
  basic,
  post,
  type Receiver,
  startReceiver,
  startRelay,
  track,
  waitFor,
  waitForDelivery,
  WRITE_KEY,
} from '../helpers'
import { api, newSecretsKey, webhooksTo } from './api-client'

const READ_TOKEN = 'read-token-for-tests-0123'
const SHARED_SECRET = 'shared-secret-never-shown-9f8e7d'
const HEADER_KEY = 'receiver-api-key-never-shown-4c3b'

describe.each(STORE_KINDS)('sources through the admin API (%s)', (kind) => {
  let receiver: Receiver
  let relay: Relay

  beforeEach(async () => {
    receiver = await startReceiver()
    relay = await startRelay(receiver.url, { readToken: READ_TOKEN, secretsKey: newSecretsKey() }, kind)
  })
  afterEach(async () => {
    await relay.close()
    await receiver.close()
  })

  const send = (writeKey: string, message = track()) =>
    post(`${relay.url}/v1/batch`, { batch: [message] }, { authorization: basic(writeKey) })

  it('creates a source whose generated key, shown once, is accepted at once, and lists both kinds', async () => {
    const created = await api(relay.url, 'PUT', '/v1/sources/shop', webhooksTo(receiver.url))
    expect(created.status).toBe(201)
    expect(created.body.writeKey).toMatch(/^tk_/)
    expect(created.headers.etag).toMatch(/^"r\d+"$/)
    const message = track()
    expect((await send(created.body.writeKey, message)).status).toBe(200)
    await waitFor(() => receiver.received.find((r) => r.body['messageId'] === message['messageId']), 'the delivery')

    const listed = await api(relay.url, 'GET', '/v1/sources')
    expect(listed.body.sources.map((s: any) => [s.name, s.provisioned, s.enabled])).toEqual([
      ['web', true, true],
      ['shop', false, true],
    ])
    expect(listed.text).not.toContain(created.body.writeKey)
    expect(listed.text).not.toContain(WRITE_KEY)
    const shop = listed.body.sources[1]
    expect(shop.writeKeys).toEqual([
      { id: expect.any(String), prefix: created.body.writeKey.slice(0, 6), createdAt: expect.any(String) },
    ])
    const one = await api(relay.url, 'GET', '/v1/sources/shop')
    expect(one.body).toEqual({ ...shop, etag: undefined })
    expect(one.headers.etag).toBe(shop.etag)
    expect((await api(relay.url, 'GET', '/v1/sources/nope')).status).toBe(404)
  })

  it('refuses to change a file source (409 ERR_PROVISIONED)', async () => {
    for (const answer of [
      await api(relay.url, 'PUT', '/v1/sources/web', webhooksTo(receiver.url)),
      await api(relay.url, 'DELETE', '/v1/sources/web'),
      await api(relay.url, 'POST', '/v1/sources/web/write-keys'),
    ]) {
      expect(answer.status).toBe(409)
      expect(answer.body.error.code).toBe('ERR_PROVISIONED')
    }
    expect((await send(WRITE_KEY)).status).toBe(200)
  })

  it('answers 400 listing every problem with its path, and stores nothing', async () => {
    const answer = await api(relay.url, 'PUT', '/v1/sources/shop', {
      name: 'other',
      destinations: { Webhooks: { webhooks: [{ url: 'not a url' }], sharedSecrt: 'x' } },
      schema: { blockedEvents: 'Signed Up' },
    })
    expect(answer.status).toBe(400)
    expect(answer.body.error.code).toBe('ERR_INVALID_SOURCE')
    const fields = answer.body.error.problems.map((p: any) => p.field)
    expect(fields).toEqual(expect.arrayContaining(['name', 'schema.blockedEvents']))
    // The destination's problems too, every one: the misspelt key and the bad URL alike.
    expect(fields).toEqual(
      expect.arrayContaining(['destinations.Webhooks.sharedSecrt', 'destinations.Webhooks.webhooks[0].url']),
    )
    expect((await api(relay.url, 'GET', '/v1/sources/shop')).status).toBe(404)
    expect((await api(relay.url, 'GET', '/v1/audit')).body.entries).toEqual([])
  })

  it('keeps secrets encrypted, answers them masked, keeps a stored one for "***" and signs with it', async () => {
    const headers = { 'X-Api-Key': HEADER_KEY }
    const body = {
      destinations: { Webhooks: { webhooks: [{ url: receiver.url, headers }], sharedSecret: SHARED_SECRET } },
    }
    const created = await api(relay.url, 'PUT', '/v1/sources/shop', body)
    expect(created.status).toBe(201)
    expect(created.text).not.toContain(SHARED_SECRET)
    expect(created.text).not.toContain(HEADER_KEY)
    const read = await api(relay.url, 'GET', '/v1/sources/shop')
    expect(read.body.destinations.Webhooks.sharedSecret).toBe('***')
    expect(read.body.destinations.Webhooks.webhooks[0].headers).toEqual({ 'X-Api-Key': '***' })

    // The answer sent back as it is (disabled meanwhile, then enabled again) keeps both secrets.
    const replaced = await api(
      relay.url,
      'PUT',
      '/v1/sources/shop',
      { ...read.body, name: undefined, writeKeys: undefined, provisioned: undefined, etag: undefined },
      { 'if-match': read.headers.etag as string },
    )
    expect(replaced.status, replaced.text).toBe(200)
    const message = track()
    await send(created.body.writeKey, message)
    const got = await waitFor(() => receiver.received.find((r) => r.body['messageId'] === message['messageId']))
    expect(got.headers['x-api-key']).toBe(HEADER_KEY)
    expect(got.headers['x-signature']).toBe(createHmac('sha1', SHARED_SECRET).update(got.raw).digest('hex'))

    const audit = await api(relay.url, 'GET', '/v1/audit')
    expect(audit.body.entries.map((e: any) => [e.actor, e.action, e.target])).toEqual([
      ['admin', 'source.replaced', 'shop'],
      ['admin', 'source.created', 'shop'],
    ])
    expect(audit.text).not.toContain(SHARED_SECRET)
    expect(audit.text).not.toContain(HEADER_KEY)
    expect(audit.text).not.toContain(created.body.writeKey)
  })

  it('refuses "***" where no secret is stored', async () => {
    const answer = await api(relay.url, 'PUT', '/v1/sources/shop', webhooksTo(receiver.url, { sharedSecret: '***' }))
    expect(answer.status).toBe(400)
    expect(answer.body.error.problems).toEqual([
      { field: 'destinations.Webhooks.sharedSecret', message: expect.stringContaining('none is stored') },
    ])
  })

  it('refuses a stale If-Match with 412 and changes nothing', async () => {
    const created = await api(relay.url, 'PUT', '/v1/sources/shop', webhooksTo(receiver.url))
    const etag = created.headers.etag as string
    expect(
      (
        await api(
          relay.url,
          'PUT',
          '/v1/sources/shop',
          { ...webhooksTo(receiver.url), enabled: false },
          { 'if-match': etag },
        )
      ).status,
    ).toBe(200)
    const stale = await api(relay.url, 'PUT', '/v1/sources/shop', webhooksTo('https://elsewhere.example.com/x'), {
      'if-match': etag,
    })
    expect(stale.status).toBe(412)
    expect(stale.body.error.code).toBe('ERR_PRECONDITION_FAILED')
    const now = await api(relay.url, 'GET', '/v1/sources/shop')
    expect(now.body.enabled).toBe(false)
    expect(now.body.destinations.Webhooks.webhooks).toEqual([{ url: receiver.url }])
    expect((await api(relay.url, 'DELETE', '/v1/sources/shop', undefined, { 'if-match': etag })).status).toBe(412)
  })

  it('refuses the messages of a disabled source with 403 ERR_SOURCE_DISABLED', async () => {
    const created = await api(relay.url, 'PUT', '/v1/sources/shop', { ...webhooksTo(receiver.url), enabled: false })
    const answer = await send(created.body.writeKey)
    expect(answer.status).toBe(403)
    expect(answer.body.error.code).toBe('ERR_SOURCE_DISABLED')
    await api(relay.url, 'PUT', '/v1/sources/shop', webhooksTo(receiver.url))
    expect((await send(created.body.writeKey)).status).toBe(200)
  })

  it('rotates write keys: a new one works beside the old, a deleted one is refused', async () => {
    const created = await api(relay.url, 'PUT', '/v1/sources/shop', {
      ...webhooksTo(receiver.url),
      writeKey: 'shop-key-given-1234',
    })
    expect(created.body.writeKey).toBeUndefined()
    const added = await api(relay.url, 'POST', '/v1/sources/shop/write-keys')
    expect(added.status).toBe(201)
    expect((await send('shop-key-given-1234')).status).toBe(200)
    expect((await send(added.body.writeKey)).status).toBe(200)
    const listed = await api(relay.url, 'GET', '/v1/sources/shop')
    const old = listed.body.writeKeys.find((k: any) => k.id !== added.body.id)
    expect((await api(relay.url, 'DELETE', `/v1/sources/shop/write-keys/${old.id}`)).status).toBe(204)
    expect((await send('shop-key-given-1234')).status).toBe(401)
    expect((await send(added.body.writeKey)).status).toBe(200)
    // On replace, a key named must be one of the source's.
    const wrong = await api(relay.url, 'PUT', '/v1/sources/shop', {
      ...webhooksTo(receiver.url),
      writeKey: 'shop-key-given-1234',
    })
    expect(wrong.status).toBe(400)
    expect(wrong.body.error.problems[0].field).toBe('writeKey')
    const actions = (await api(relay.url, 'GET', '/v1/audit?limit=2')).body
    expect(actions.entries.map((e: any) => e.action)).toEqual(['write-key.deleted', 'write-key.created'])
    const rest = await api(relay.url, 'GET', `/v1/audit?limit=2&cursor=${actions.next}`)
    expect(rest.body.entries.map((e: any) => e.action)).toEqual(['source.created'])
    expect(rest.body.next).toBeNull()
  })

  it('fails the pending deliveries of a deleted source, and refuses their retry until the name exists again', async () => {
    receiver.respond((_req, res) => res.writeHead(503).end())
    const created = await api(relay.url, 'PUT', '/v1/sources/shop', webhooksTo(receiver.url))
    await send(created.body.writeKey)
    await waitFor(() => receiver.received[0], 'a first attempt')
    expect((await api(relay.url, 'DELETE', '/v1/sources/shop')).status).toBe(204)
    const failed = await waitFor(async () => {
      const { body } = await api(relay.url, 'GET', '/v1/deliveries?status=failed&source=shop')
      return body.deliveries[0]
    })
    expect(failed.lastError).toBe('source removed')
    const refused = await api(relay.url, 'POST', `/v1/deliveries/${failed.id}/retry`)
    expect(refused.status).toBe(409)
    expect(refused.body.error.code).toBe('ERR_SOURCE_REMOVED')
    receiver.respond((_req, res) => res.writeHead(200).end())
    await api(relay.url, 'PUT', '/v1/sources/shop', webhooksTo(receiver.url))
    expect((await api(relay.url, 'POST', `/v1/deliveries/${failed.id}/retry`)).status).toBe(202)
  })

  it('leaves a deleted source’s dead letters out of a bulk retry until the name exists again', async () => {
    receiver.respond((_req, res) => res.writeHead(503).end())
    const created = await api(relay.url, 'PUT', '/v1/sources/shop', webhooksTo(receiver.url))
    await send(created.body.writeKey)
    await waitFor(() => receiver.received[0], 'a first attempt')
    expect((await api(relay.url, 'DELETE', '/v1/sources/shop')).status).toBe(204)
    await waitFor(
      async () => (await api(relay.url, 'GET', '/v1/deliveries?status=failed&source=shop')).body.deliveries[0],
    )
    // A dead letter of the file's source, beside it (a 404 is final).
    receiver.respond((_req, res) => res.writeHead(404).end())
    const web = track()
    expect((await post(`${relay.url}/v1/track`, web)).status).toBe(200)
    await waitFor(
      async () => (await api(relay.url, 'GET', '/v1/deliveries?status=failed&source=web')).body.deliveries[0],
    )
    receiver.respond((_req, res) => res.writeHead(200).end())

    const retry = (filter: Record<string, unknown>, dryRun = false) =>
      api(relay.url, 'POST', '/v1/deliveries/retry', { filter, dryRun })
    expect((await retry({}, true)).body).toEqual({ matched: 1 })
    expect((await retry({})).body).toEqual({ matched: 1, retried: 1 })
    await waitForDelivery(relay.url, 'delivered', web['messageId'] as string)
    const refused = await retry({ source: 'shop' })
    expect(refused.status).toBe(409)
    expect(refused.body.error.code).toBe('ERR_SOURCE_REMOVED')
    const [kept] = (await api(relay.url, 'GET', '/v1/deliveries?status=failed&source=shop')).body.deliveries
    expect(kept.lastError).toBe('source removed')

    await api(relay.url, 'PUT', '/v1/sources/shop', webhooksTo(receiver.url))
    expect((await retry({ source: 'shop' })).body).toEqual({ matched: 1, retried: 1 })
  })

  it('starts the metrics of a source created through the API at 0, before its first message', async () => {
    const scrape = async () => {
      const response = await request(`${relay.url}/metrics`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })
      return response.body.text()
    }
    expect(await scrape()).not.toContain('source="shop"')
    expect((await api(relay.url, 'PUT', '/v1/sources/shop', webhooksTo(receiver.url))).status).toBe(201)
    const text = await scrape()
    expect(text).toContain('tracklet_messages_ingested_total{source="shop"} 0')
    expect(text).toContain(
      'tracklet_delivery_attempts_total{source="shop",destination="Webhooks",outcome="delivered"} 0',
    )
    expect(text).toContain('tracklet_webhook_requests_total{source="shop",destination="Webhooks",status_class="2xx"} 0')
  })

  it('sends the pending deliveries to a URL fixed through the API', async () => {
    const broken = await startReceiver()
    broken.respond((_req, res) => res.writeHead(503).end())
    try {
      const created = await api(relay.url, 'PUT', '/v1/sources/shop', webhooksTo(broken.url))
      const message = track()
      await send(created.body.writeKey, message)
      await waitFor(() => broken.received[0], 'a failed attempt')
      await api(relay.url, 'PUT', '/v1/sources/shop', webhooksTo(receiver.url))
      await waitFor(
        () => receiver.received.find((r) => r.body['messageId'] === message['messageId']),
        'the retry at the fixed URL',
      )
    } finally {
      await broken.close()
    }
  })

  it('lets the read token read everything and change nothing (403 ERR_READ_ONLY)', async () => {
    await api(relay.url, 'PUT', '/v1/sources/shop', webhooksTo(receiver.url))
    for (const path of ['/v1/sources', '/v1/sources/shop', '/v1/audit', '/v1/deliveries']) {
      expect((await api(relay.url, 'GET', path, undefined, {}, READ_TOKEN)).status, path).toBe(200)
    }
    const writes = [
      await api(relay.url, 'PUT', '/v1/sources/other', webhooksTo(receiver.url), {}, READ_TOKEN),
      await api(relay.url, 'DELETE', '/v1/sources/shop', undefined, {}, READ_TOKEN),
      await api(relay.url, 'POST', '/v1/deletions', { userId: 'u1' }, {}, READ_TOKEN),
    ]
    for (const answer of writes) {
      expect(answer.status).toBe(403)
      expect(answer.body.error.code).toBe('ERR_READ_ONLY')
    }
    expect((await api(relay.url, 'GET', '/v1/sources/other')).status).toBe(404)
  })
})

describe('a source with a secret, without secretsKey', () => {
  it('is refused with 400 ERR_NO_SECRETS_KEY, and one without a secret is stored', async () => {
    const receiver = await startReceiver()
    const relay = await startRelay(receiver.url)
    try {
      const refused = await api(
        relay.url,
        'PUT',
        '/v1/sources/shop',
        webhooksTo(receiver.url, { sharedSecret: SHARED_SECRET }),
      )
      expect(refused.status).toBe(400)
      expect(refused.body.error.code).toBe('ERR_NO_SECRETS_KEY')
      expect(refused.text).not.toContain(SHARED_SECRET)
      expect((await api(relay.url, 'PUT', '/v1/sources/shop', webhooksTo(receiver.url))).status).toBe(201)
    } finally {
      await relay.close()
      await receiver.close()
    }
  })
})
