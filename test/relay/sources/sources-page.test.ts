import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { Relay } from '../../../src/relay/index'
import { STORE_KINDS } from '../../support/stores'
import { PageClient } from '../console/page-client'
import { basic, post, type Receiver, startReceiver, startRelay, track, waitFor, WRITE_KEY } from '../helpers'
import { api, newSecretsKey, webhooksTo } from './api-client'

const SHARED_SECRET = 'page-shared-secret-never-shown-77'

describe.each(STORE_KINDS)('the sources view of the operator page (%s)', (kind) => {
  let receiver: Receiver
  let relay: Relay
  let client: PageClient

  beforeEach(async () => {
    receiver = await startReceiver()
    relay = await startRelay(receiver.url, { secretsKey: newSecretsKey() }, kind)
    client = new PageClient(relay.url)
    await client.signIn()
  })
  afterEach(async () => {
    await relay.close()
    await receiver.close()
  })

  const section = (html: string, name: string) => {
    const start = html.indexOf(`data-source="${name}"`)
    return html.slice(start, html.indexOf('</section>', start))
  }
  const send = (writeKey: string) =>
    post(`${relay.url}/v1/batch`, { batch: [track()] }, { authorization: basic(writeKey) })

  it('lists both kinds, secrets masked and no key, with actions for API sources only', async () => {
    const created = await api(
      relay.url,
      'PUT',
      '/v1/sources/shop',
      webhooksTo(receiver.url, { sharedSecret: SHARED_SECRET }),
    )
    const page = await client.get('/ui/sources')
    expect(page.status).toBe(200)
    expect(page.body).not.toContain(SHARED_SECRET)
    expect(page.body).not.toContain(created.body.writeKey)
    expect(page.body).not.toContain(WRITE_KEY)
    expect(section(page.body, 'web')).toContain('(config file)')
    expect(section(page.body, 'web')).not.toContain('<form')
    expect(section(page.body, 'shop')).toContain('(admin API)')
    expect(section(page.body, 'shop')).toContain('Shared secret: ***')
    expect(section(page.body, 'shop')).toContain('action="/ui/sources/shop/enabled"')
  })

  it('disables and enables a source, adds and removes a webhook URL, and rotates a key shown once', async () => {
    const created = await api(relay.url, 'PUT', '/v1/sources/shop', webhooksTo(receiver.url))
    const form = async () => {
      const html = section((await client.get('/ui/sources')).body, 'shop')
      return {
        csrf: PageClient.csrfOf(html),
        etag: /name="etag" value="([^"]+)"/.exec(html)![1]!.replaceAll('&quot;', '"'),
      }
    }
    expect((await client.post('/ui/sources/shop/enabled', { ...(await form()), enabled: 'false' })).status).toBe(303)
    expect((await send(created.body.writeKey)).status).toBe(403)
    await client.post('/ui/sources/shop/enabled', { ...(await form()), enabled: 'true' })
    expect((await send(created.body.writeKey)).status).toBe(200)

    const second = await startReceiver()
    try {
      await client.post('/ui/sources/shop/webhooks/add', { ...(await form()), url: second.url })
      await send(created.body.writeKey)
      await waitFor(() => second.received[0], 'the added URL')
      await client.post('/ui/sources/shop/webhooks/remove', { ...(await form()), index: '0' })
      expect((await api(relay.url, 'GET', '/v1/sources/shop')).body.destinations.Webhooks.webhooks).toEqual([
        { url: second.url },
      ])
    } finally {
      await second.close()
    }

    const rotated = await client.post('/ui/sources/shop/write-keys/add', await form())
    expect(rotated.status).toBe(201)
    expect(rotated.headers['cache-control']).toBe('no-store')
    const newKey = /id="new-write-key">([^<]+)</.exec(rotated.body)![1]!
    expect((await send(newKey)).status).toBe(200)
    expect((await client.get('/ui/sources')).body).not.toContain(newKey)

    // A stale form (the source changed since it was shown) changes nothing.
    const stale = await form()
    await api(relay.url, 'PUT', '/v1/sources/shop', { ...webhooksTo(receiver.url), enabled: true })
    expect((await client.post('/ui/sources/shop/enabled', { ...stale, enabled: 'false' })).status).toBe(412)
    expect((await send(newKey)).status).toBe(200)
  })

  it('refuses an action without the CSRF token', async () => {
    await api(relay.url, 'PUT', '/v1/sources/shop', webhooksTo(receiver.url))
    expect((await client.post('/ui/sources/shop/enabled', { csrf: 'forged', enabled: 'false' })).status).toBe(403)
    expect((await api(relay.url, 'GET', '/v1/sources/shop')).body.enabled).toBe(true)
  })
})
