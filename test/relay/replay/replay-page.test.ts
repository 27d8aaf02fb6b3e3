import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { Relay } from '../../../src/relay/index'
import { PageClient } from '../console/page-client'
import { adminGet, post, type Receiver, startReceiver, startRelay, track, waitFor } from '../helpers'

// The operator page's replays: the count first, a CSRF-checked confirm, then progress with pause and cancel.
describe('replays on the operator page', () => {
  let receiver: Receiver
  let relay: Relay
  let client: PageClient
  beforeEach(async () => {
    receiver = await startReceiver()
    relay = await startRelay(receiver.url)
    client = new PageClient(relay.url)
    await client.signIn()
    const batch = [track({ userId: 'ann', messageId: 'a1' }), track({ userId: 'ann' }), track({ userId: 'bob' })]
    expect((await post(`${relay.url}/v1/batch`, { batch })).status).toBe(200)
    await waitFor(() => (receiver.received.length === 3 ? true : undefined), 'the messages delivered')
  })
  afterEach(async () => {
    await receiver.close()
    await relay.close()
  })

  it('links the overview filter to the replay form, which asks for the window before counting', async () => {
    const overview = await client.get('/?userId=ann&refresh=off')
    expect(overview.body).toContain('href="/ui/replays/new?userId=ann"')
    const form = await client.get('/ui/replays/new?userId=ann')
    expect(form.status).toBe(200)
    expect(form.body).not.toContain('role="alert"')
    expect(form.body).not.toContain('action="/ui/replays"')
    // Counted without a window, it says what is missing.
    const counted = await client.get('/ui/replays/new?userId=ann&counted=1')
    expect(counted.body).toContain('filter.since is required')
  })

  it('counts, starts on confirm, and shows progress with pause, resume and cancel', async () => {
    const confirm = await client.get('/ui/replays/new?userId=ann&since=1h&until=2999-01-01T00:00:00Z&rate=0.01')
    expect(confirm.body).toContain('Replay 2 deliveries')
    const csrf = PageClient.csrfOf(confirm.body)
    const fields = { userId: 'ann', since: '1h', until: '2999-01-01T00:00:00Z', rate: '0.01' }
    // Without the session's CSRF token, or from another origin, nothing starts.
    expect((await client.post('/ui/replays', fields)).status).toBe(403)
    expect((await client.post('/ui/replays', { ...fields, csrf }, { origin: 'https://evil.example' })).status).toBe(403)
    expect((await adminGet(`${relay.url}/v1/replays`)).body.replays).toEqual([])

    const started = await client.post('/ui/replays', { ...fields, csrf })
    expect(started.status).toBe(303)
    const [replay] = (await adminGet(`${relay.url}/v1/replays`)).body.replays
    expect(replay).toMatchObject({ state: 'running', matched: 2 })
    expect(started.headers['location']).toBe(`/ui/replays?started=${replay.id}`)
    const list = await client.get(`/ui/replays?started=${replay.id}`)
    expect(list.body).toContain(`Replay ${replay.id} started.`)
    expect(list.body).toContain('userId = ann')
    expect(list.body).toContain(`aria-label="Pause replay ${replay.id}"`)

    expect((await client.post(`/ui/replays/${replay.id}/pause`, { csrf })).headers['location']).toBe(
      '/ui/replays?done=pause',
    )
    expect((await adminGet(`${relay.url}/v1/replays/${replay.id}`)).body.state).toBe('paused')
    expect((await client.get('/ui/replays')).body).toContain(`aria-label="Resume replay ${replay.id}"`)
    await client.post(`/ui/replays/${replay.id}/cancel`, { csrf })
    expect((await adminGet(`${relay.url}/v1/replays/${replay.id}`)).body.state).toBe('cancelled')
    const after = await client.get('/ui/replays')
    expect(after.body).not.toContain(`aria-label="Cancel replay ${replay.id}"`)
    // Cancelling again is refused, as a page.
    const again = await client.post(`/ui/replays/${replay.id}/cancel`, { csrf })
    expect(again.status).toBe(409)
    expect(again.body).toContain('is cancelled: it cannot cancel')
  })
})
