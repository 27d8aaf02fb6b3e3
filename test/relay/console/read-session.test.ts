import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { Relay } from '../../../src/relay/index'
import { STORE_KINDS } from '../../support/stores'
import { adminGet, post, type Receiver, startReceiver, startRelay, track, waitForDelivery } from '../helpers'
import { PageClient } from './page-client'

// The read token (`readToken`) signs in to the operator page too: its session sees everything and
// changes nothing (docs/relay.md, "The admin API").

const READ_TOKEN = 'read-token-for-tests-0123'

describe.each(STORE_KINDS)('the operator page signed in with the read token, on %s', (kind) => {
  let receiver: Receiver
  let relay: Relay

  beforeEach(async () => {
    receiver = await startReceiver()
    // Every webhook is refused for good: deliveries are dead-lettered at their first attempt.
    receiver.respond((_req, res) => res.writeHead(404).end())
    relay = await startRelay(receiver.url, { readToken: READ_TOKEN }, kind)
  })
  afterEach(async () => {
    await relay.close()
    await receiver.close()
  })

  async function deadLetter(): Promise<{ id: string; messageId: string }> {
    const message = track({ event: 'Seen by the read token' })
    expect((await post(`${relay.url}/v1/track`, message)).status).toBe(200)
    return waitForDelivery(relay.url, 'failed', message['messageId'] as string)
  }

  it('shows every page without its actions, and refuses an action posted anyway', async () => {
    const delivery = await deadLetter()
    const reader = new PageClient(relay.url)
    expect((await reader.signIn(READ_TOKEN)).status).toBe(303)

    const overview = await reader.get('/?status=failed')
    expect(overview.status).toBe(200)
    expect(overview.body).toContain('Seen by the read token')
    expect(overview.body).toContain('<body class="read-only">')
    expect(overview.body).toContain('Signed in with the read token')
    for (const path of [`/ui/deliveries/${delivery.id}`, '/ui/sources', '/ui/endpoints', '/ui/replays'])
      expect((await reader.get(path)).status, path).toBe(200)
    // No way into a replay: no link, no form, and no invitation to start one.
    expect(overview.body).toContain('href="/ui/replays"')
    expect(overview.body).not.toContain('Replay these')
    expect(overview.body).not.toContain('/ui/replays/new')
    expect((await reader.get('/ui/replays')).body).not.toContain('Replay these')
    const window = 'since=1h&until=2999-01-01T00:00:00Z'
    const form = await reader.get(`/ui/replays/new?status=failed&${window}`)
    expect(form.status).toBe(403)
    expect(form.body).toContain('the read token reads and changes nothing')
    expect(form.body).not.toContain('action="/ui/replays"')

    // A form posted by hand, with the session's own CSRF token, changes nothing.
    const csrf = PageClient.csrfOf((await reader.get(`/ui/deliveries/${delivery.id}`)).body)
    const refused = await reader.post(`/ui/deliveries/${delivery.id}/retry`, { csrf })
    expect(refused.status).toBe(403)
    expect(refused.body).toContain('the read token reads and changes nothing')
    const pause = await reader.post(`/ui/endpoints/${encodeURIComponent('x')}/pause`, { csrf })
    expect(pause.status).toBe(403)
    const replay = { status: 'failed', since: '1h', until: '2999-01-01T00:00:00Z', csrf }
    expect((await reader.post('/ui/replays', replay)).status).toBe(403)
    expect((await adminGet(`${relay.url}/v1/replays`)).body.replays).toEqual([])
    expect((await waitForDelivery(relay.url, 'failed', delivery.messageId)).attempts).toHaveLength(1)

    // Signing out is not a change to the relay: it works, and the cookie no longer signs in.
    expect((await reader.post('/ui/sign-out', { csrf })).status).toBe(303)
    expect((await reader.get('/')).body).toContain('action="/ui/sign-in"')
  })

  it('keeps the admin token’s page whole, and names both tokens when a sign-in fails', async () => {
    await deadLetter()
    const admin = new PageClient(relay.url)
    expect((await admin.signIn()).status).toBe(303)
    const overview = await admin.get('/?status=failed')
    expect(overview.body).not.toContain('read-only')
    expect(overview.body).toContain('/retry"')
    expect(overview.body).toContain('href="/ui/replays/new?status=failed">Replay these…</a>')
    expect((await admin.get('/ui/replays')).body).toContain('Replay these')

    const stranger = new PageClient(relay.url)
    const wrong = await stranger.signIn('neither-token-0123456789')
    expect(wrong.status).toBe(401)
    expect(wrong.body).toContain('neither the admin token nor the read token')
    expect(wrong.body).not.toContain(READ_TOKEN)
  })
})
