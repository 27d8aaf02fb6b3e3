import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { Relay } from '../../../src/relay/index'
import { Sessions, SESSION_IDLE_MS } from '../../../src/relay/console/page/sessions'
import { post, type Receiver, startReceiver, startRelay, track, waitForDelivery } from '../helpers'
import { PageClient } from './page-client'

const HOOK_TOKEN = 'hook-s3cret-in-query'

let receiver: Receiver
let relay: Relay
let client: PageClient

beforeEach(async () => {
  receiver = await startReceiver()
  // Every webhook is refused for good: deliveries are dead-lettered at their first attempt.
  receiver.respond((_req, res) => res.writeHead(404).end())
  relay = await startRelay(`${receiver.url}?token=${HOOK_TOKEN}`)
  client = new PageClient(relay.url)
})
afterEach(async () => {
  await relay.close()
  await receiver.close()
})

async function deadLetter(overrides: Record<string, unknown> = {}) {
  const message = track(overrides)
  expect((await post(`${relay.url}/v1/track`, message)).status).toBe(200)
  return waitForDelivery(relay.url, 'failed', message['messageId'] as string)
}

describe('the operator page, signed out', () => {
  it('shows only the sign-in form, with a strict Content-Security-Policy', async () => {
    await deadLetter({ event: 'Visible only when signed in' })
    const page = await client.get('/')
    expect(page.status).toBe(200)
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8')
    expect(page.headers['content-security-policy']).toContain("default-src 'none'")
    expect(page.headers['content-security-policy']).not.toContain('unsafe-inline')
    expect(page.headers['x-frame-options']).toBe('DENY')
    expect(page.body).toContain('action="/ui/sign-in"')
    expect(page.body).not.toContain('Visible only when signed in')
    expect((await client.get('/ui/deliveries/1')).body).not.toContain('Visible only when signed in')
  })

  it.each([
    ['/€', '/%E2%82%AC'],
    ['/?source=caf%C3%A9&x=€', '/?source=caf%C3%A9&x=%E2%82%AC'],
    ['//evil.example/€', '/'],
  ])('returns to next=%s after sign-in, percent-encoded (Location is ASCII only)', async (next, location) => {
    const signedIn = await client.post('/ui/sign-in', { token: 'admin-token-for-tests', next })
    expect(signedIn.status).toBe(303)
    expect(signedIn.headers['location']).toBe(location)
  })

  it('refuses a wrong token, and signs in with the admin token through an HttpOnly, SameSite=Strict cookie', async () => {
    const wrong = await client.signIn('not-the-token')
    expect(wrong.status).toBe(401)
    expect(wrong.headers['set-cookie']).toBeUndefined()
    expect(wrong.body).toContain('That is not the admin token.')

    const signedIn = await client.signIn()
    expect(signedIn.status).toBe(303)
    expect(signedIn.headers['location']).toBe('/')
    const cookie = signedIn.headers['set-cookie'] as string
    expect(cookie).toMatch(/^tracklet_session=[A-Za-z0-9_-]{43}; /)
    expect(cookie).toContain('HttpOnly')
    expect(cookie).toContain('SameSite=Strict')
    expect(cookie).not.toContain('Secure')
    expect((await client.get('/')).body).toContain('Recent deliveries')
  })

  it('marks the cookie Secure when the browser came over TLS through a proxy', async () => {
    const response = await client.post(
      '/ui/sign-in',
      { token: 'admin-token-for-tests' },
      { 'x-forwarded-proto': 'https' },
    )
    expect(response.headers['set-cookie']).toContain('; Secure')
  })

  it('refuses a sign-in posted from another site', async () => {
    expect(
      (await client.post('/ui/sign-in', { token: 'admin-token-for-tests' }, { origin: 'https://evil.example' })).status,
    ).toBe(403)
  })

  it('says it is closed when the relay has no admin token', async () => {
    const closed = await startRelay(receiver.url, { adminToken: undefined })
    try {
      const page = new PageClient(closed.url)
      expect((await page.get('/')).body).toContain('The page is closed')
      expect((await page.signIn('')).status).toBe(401)
    } finally {
      await closed.close()
    }
  })
})

describe('the operator page, signed in', () => {
  beforeEach(async () => {
    await client.signIn()
  })

  it('lists recent deliveries newest first, filtered by status and source', async () => {
    const first = await deadLetter({ event: 'First' })
    receiver.respond((_req, res) => res.writeHead(200).end())
    const delivered = track({ event: 'Second' })
    await post(`${relay.url}/v1/track`, delivered)
    await waitForDelivery(relay.url, 'delivered', delivered['messageId'] as string)

    const all = (await client.get('/')).body
    expect(all.indexOf('Second')).toBeGreaterThan(-1)
    expect(all.indexOf('Second')).toBeLessThan(all.indexOf('First'))
    const failed = (await client.get('/?status=failed&source=web')).body
    expect(failed).toContain('First')
    expect(failed).not.toContain('Second')
    expect(failed).toContain(`action="/ui/deliveries/${first.id}/retry"`)
    expect((await client.get('/?source=ios')).body).toContain('No delivery matches.')
    expect((await client.get('/?status=lost')).status).toBe(400)
  })

  it('shows the outbox: dead letters per source', async () => {
    await deadLetter()
    await deadLetter()
    const page = (await client.get('/')).body
    expect(page).toMatch(
      /<td>web<\/td>\s*<td class="num">0<\/td>\s*<td class="num">–<\/td>\s*<td class="num"><a [^>]+>2<\/a>/,
    )
  })

  it('shows a delivery’s attempts with each URL’s query string redacted, its status and duration', async () => {
    const delivery = await deadLetter()
    const page = (await client.get(`/ui/deliveries/${delivery.id}`)).body
    expect(page).toContain(receiver.url)
    expect(page).toContain('HTTP 404')
    expect(page).toMatch(/<td class="num">\d+ ms<\/td>/)
    expect(page).not.toContain(HOOK_TOKEN)
    expect(page).not.toContain('?token')
    expect((await client.get('/ui/deliveries/999')).status).toBe(404)
  })

  it('shows a message field holding markup as text', async () => {
    const delivery = await deadLetter({
      event: '<script>window.pwned = 1</script>',
      properties: { note: '"><img src=x onerror=alert(1)>' },
    })
    for (const path of ['/', `/ui/deliveries/${delivery.id}`]) {
      const page = (await client.get(path)).body
      expect(page).toContain('&lt;script&gt;window.pwned = 1&lt;/script&gt;')
      expect(page).not.toContain('<script')
      expect(page).not.toContain('<img src=x')
    }
  })

  it('retries a dead letter with a POST that carries the session’s CSRF token from this origin', async () => {
    const delivery = await deadLetter()
    const csrf = PageClient.csrfOf((await client.get('/')).body)
    const retry = `/ui/deliveries/${delivery.id}/retry`
    expect((await client.post(retry, {})).status).toBe(403)
    expect((await client.post(retry, { csrf: `${csrf}x` })).status).toBe(403)
    expect((await client.post(retry, { csrf }, { origin: 'https://evil.example' })).status).toBe(403)
    expect((await client.post(retry, { csrf }, { 'sec-fetch-site': 'cross-site' })).status).toBe(403)
    expect((await client.post(retry, { csrf }, { origin: '', referer: '' })).status).toBe(403)
    expect((await new PageClient(relay.url).post(retry, { csrf })).status).toBe(401)
    // None of those touched it.
    expect((await waitForDelivery(relay.url, 'failed', delivery.messageId)).attempts).toHaveLength(1)

    receiver.respond((_req, res) => res.writeHead(200).end())
    const done = await client.post(retry, { csrf })
    expect(done.status).toBe(303)
    expect(done.headers['location']).toBe(`/ui/deliveries/${delivery.id}?retried`)
    await waitForDelivery(relay.url, 'delivered', delivery.messageId)
    expect((await client.post(retry, { csrf })).status).toBe(409)
  })

  it('signs out: the session ends and the cookie is cleared', async () => {
    const csrf = PageClient.csrfOf((await client.get('/')).body)
    const out = await client.post('/ui/sign-out', { csrf })
    expect(out.status).toBe(303)
    expect(out.headers['set-cookie']).toMatch(/^tracklet_session=; .*Max-Age=0/)
    // The old cookie, replayed, opens nothing.
    expect((await client.get('/')).body).toContain('action="/ui/sign-in"')
  })
})

describe('Sessions', () => {
  it('ends a session after an hour without a request', () => {
    let now = 0
    const sessions = new Sessions(() => now)
    const { id } = sessions.create()
    const cookie = `other=1; tracklet_session=${id}`
    now += SESSION_IDLE_MS
    expect(sessions.find(cookie)).toBeDefined()
    now += SESSION_IDLE_MS + 1
    expect(sessions.find(cookie)).toBeUndefined()
    expect(sessions.find(`tracklet_session=${id.slice(1)}`)).toBeUndefined()
  })
})
