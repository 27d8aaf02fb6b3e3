import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { Relay } from '../../../src/relay/index'
import { STORE_KINDS } from '../../support/stores'
import { PageClient } from '../console/page-client'
import { adminGet, post, type Receiver, startReceiver, startRelay, track, waitFor } from '../helpers'
import { api } from '../sources/api-client'

// The operator page's suppressions (docs/privacy.md, "On the page"): the admin API's operations,
// behind the page's sessions and CSRF tokens.

const READ_TOKEN = 'read-token-for-suppressions-page'

describe.each(STORE_KINDS)('the suppressions view of the operator page (%s)', (kind) => {
  let receiver: Receiver
  let relay: Relay
  let client: PageClient

  beforeEach(async () => {
    receiver = await startReceiver()
    const webhooks = { webhooks: [{ url: receiver.url }] }
    relay = await startRelay(
      receiver.url,
      {
        readToken: READ_TOKEN,
        sources: [
          { name: 'web', writeKey: 'wk-test-web', destinations: { Webhooks: webhooks } },
          { name: 'shop', writeKey: 'wk-test-shop', destinations: { Webhooks: webhooks } },
        ],
      },
      kind,
    )
    client = new PageClient(relay.url)
    await client.signIn()
  })
  afterEach(async () => {
    await relay.close()
    await receiver.close()
  })

  const csrf = async () => PageClient.csrfOf((await client.get('/ui/suppressions')).body)
  const listed = async () => (await api(relay.url, 'GET', '/v1/suppressions')).body.suppressions as any[]
  const audit = async () =>
    ((await api(relay.url, 'GET', '/v1/audit?limit=20')).body.entries as any[]).map((e) => [
      e.action,
      e.target,
      e.actor,
    ])

  it('links it beside Sources, suppresses ids from the textarea, lists them escaped, and lifts one', async () => {
    const empty = await client.get('/ui/suppressions')
    expect(empty.status).toBe(200)
    expect(empty.body).toContain('<a href="/ui/sources">Sources</a> <a href="/ui/suppressions">Suppressions</a>')
    expect(empty.body).toContain('No user is suppressed.')
    expect(empty.body).toContain('name="erase"')

    const added = await client.post('/ui/suppressions', {
      csrf: await csrf(),
      userIds: 'alice\r\n  <script>x</script>  \r\n\r\nalice\n',
      source: 'web',
    })
    expect(added.status).toBe(303)
    expect(added.headers.location).toBe('/ui/suppressions?added=2')
    await client.post('/ui/suppressions', { csrf: await csrf(), userIds: 'bob', source: '' })
    expect((await listed()).map((s) => [s.userId, s.source]).sort()).toEqual([
      ['<script>x</script>', 'web'],
      ['alice', 'web'],
      ['bob', undefined],
    ])

    const page = await client.get('/ui/suppressions?added=2')
    expect(page.body).toContain('Suppressed: 2 newly')
    expect(page.body).toContain('Showing 1–3 of 3')
    expect(page.body).toContain('&lt;script&gt;x&lt;/script&gt;')
    expect(page.body).not.toContain('<script>x</script>')
    expect(page.body).toMatch(/data-user="bob"><td class="mono">bob<\/td><td><span class="muted">every source<\/span>/)

    const lifted = await client.post('/ui/suppressions/lift', { csrf: await csrf(), userId: 'alice', source: 'web' })
    expect(lifted.status).toBe(303)
    expect((await client.get(lifted.headers.location as string)).body).toContain('Lifted: 1 suppression.')
    expect((await listed()).map((s) => s.userId).sort()).toEqual(['<script>x</script>', 'bob'])
    const again = await client.post('/ui/suppressions/lift', { csrf: await csrf(), userId: 'alice', source: 'web' })
    expect(again.status).toBe(404)
    expect(again.body).toContain('is not suppressed')

    // Audited as the API's calls are, with the session's role.
    expect((await audit()).sort()).toEqual([
      ['suppression.added', '<script>x</script>', 'admin'],
      ['suppression.added', 'alice', 'admin'],
      ['suppression.added', 'bob', 'admin'],
      ['suppression.removed', 'alice', 'admin'],
    ])
  })

  it('lifts exactly the row shown: a row of every source leaves the user’s other rows, as the API', async () => {
    await client.post('/ui/suppressions', { csrf: await csrf(), userIds: 'carol', source: '' })
    await client.post('/ui/suppressions', { csrf: await csrf(), userIds: 'carol', source: 'web' })
    await client.post('/ui/suppressions', { csrf: await csrf(), userIds: 'carol', source: 'shop' })
    // The every-source row's own form, as the page renders it.
    const page = (await client.get('/ui/suppressions')).body
    const row = /<tr data-user="carol"><td class="mono">carol<\/td><td><span class="muted">every source.*?<\/tr>/s.exec(
      page,
    )
    const fields = Object.fromEntries(
      [...row![0].matchAll(/<input type="hidden" name="(\w+)" value="([^"]*)">/g)].map((m) => [m[1]!, m[2]!]),
    )
    const lifted = await client.post('/ui/suppressions/lift', fields)
    expect(lifted.headers.location).toBe('/ui/suppressions?lifted=1')
    expect((await listed()).map((s) => s.source).sort()).toEqual(['shop', 'web'])
    // The API's `?source=*` names the same row; without `source`, every row of the user.
    await client.post('/ui/suppressions', { csrf: await csrf(), userIds: 'carol', source: '' })
    expect((await api(relay.url, 'DELETE', '/v1/suppressions/carol?source=*')).body.removed).toBe(1)
    const missing = await api(relay.url, 'DELETE', '/v1/suppressions/carol?source=*')
    expect(missing.body.error.message).toBe('user "carol" is not suppressed for every source')
    expect((await api(relay.url, 'DELETE', '/v1/suppressions/carol')).body.removed).toBe(2)
  })

  it('erases when ticked, as the API does', async () => {
    await post(`${relay.url}/v1/batch`, { batch: [track({ userId: 'gone', messageId: 'g1' })] })
    await waitFor(async () => {
      const { body } = await adminGet(`${relay.url}/v1/deliveries?status=delivered`)
      return body.deliveries.length === 1 ? true : undefined
    }, 'delivered')
    const page = await client.get('/ui/suppressions')
    expect(page.body).toContain('Erasing cannot be undone')
    const added = await client.post('/ui/suppressions', {
      csrf: PageClient.csrfOf(page.body),
      userIds: 'gone',
      erase: 'true',
    })
    expect(added.headers.location).toBe('/ui/suppressions?added=1&erased=1')
    expect((await client.get(added.headers.location as string)).body).toContain('1 erased')
    const erased = (await adminGet(`${relay.url}/v1/deliveries?messageId=g1`)).body.deliveries[0]
    expect(erased.message).toEqual({ type: 'track', messageId: 'g1', erased: true })
    await waitFor(
      () => (receiver.received.filter((r) => r.body['type'] === 'delete').length === 2 ? true : undefined),
      'a delete message per source',
    )
  })

  it('shows bad input as an error on the page and changes nothing', async () => {
    const refused = async (fields: Record<string, string>) => {
      const answer = await client.post('/ui/suppressions', { csrf: await csrf(), ...fields })
      expect(answer.status).toBe(400)
      expect(answer.body).toContain('Nothing was changed:')
      return answer.body
    }
    expect(await refused({ userIds: ' \n \n' })).toContain('enter at least one user id.')
    const many = Array.from({ length: 5001 }, (_, i) => `user-${i}`).join('\n')
    expect(await refused({ userIds: many })).toContain('at most 5,000 user ids at once, got 5,001.')
    const unknown = await refused({ userIds: 'carol', source: '<b>nope</b>' })
    expect(unknown).toContain('must name a configured source')
    expect(unknown).toContain('&lt;b&gt;nope&lt;/b&gt;')
    expect(unknown).not.toContain('<b>nope</b>')
    // The form keeps what was typed.
    expect(unknown).toContain('>carol</textarea>')
    expect(await listed()).toEqual([])
    expect(await audit()).toEqual([])
    // The same 5,000 fit.
    const most = Array.from({ length: 5000 }, (_, i) => `user-${i}`).join('\n')
    expect((await client.post('/ui/suppressions', { csrf: await csrf(), userIds: most })).status).toBe(303)
    expect(await listed()).toHaveLength(5000)
    const first = await client.get('/ui/suppressions')
    expect(first.body).toContain('Showing 1–100 of 5000')
    expect(first.body).toContain('href="/ui/suppressions?from=100"')
    expect((await client.get('/ui/suppressions?from=4900')).body).toContain('Showing 4901–5000 of 5000')
  })

  it('shows the read token the list, with no form, and refuses its POSTs', async () => {
    await api(relay.url, 'POST', '/v1/suppressions', { userIds: ['dave'] })
    const reader = new PageClient(relay.url)
    expect((await reader.signIn(READ_TOKEN)).status).toBe(303)
    const page = await reader.get('/ui/suppressions')
    expect(page.status).toBe(200)
    expect(page.body).toContain('data-user="dave"')
    expect(page.body).not.toContain('action="/ui/suppressions')
    expect(page.body).not.toContain('<textarea')
    const token = PageClient.csrfOf(page.body)
    expect((await reader.post('/ui/suppressions', { csrf: token, userIds: 'eve' })).status).toBe(403)
    expect((await reader.post('/ui/suppressions/lift', { csrf: token, userId: 'dave' })).status).toBe(403)
    expect((await listed()).map((s) => s.userId)).toEqual(['dave'])
    // Without a session: the sign-in page, and no change.
    const stranger = new PageClient(relay.url)
    expect((await stranger.get('/ui/suppressions')).body).not.toContain('data-user="dave"')
    expect((await stranger.post('/ui/suppressions', { csrf: token, userIds: 'eve' })).status).toBe(401)
    expect((await listed()).map((s) => s.userId)).toEqual(['dave'])
  })
})
