import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Relay } from '../../../src/relay/index'
import { type Receiver, startReceiver, startRelay } from '../helpers'
import { PageClient } from './page-client'

// The operator page's forms as a first-time user meets them: what the sign-in asks for, what the
// delivery log's status filter offers, and the replay form before anything is typed in it.

const READ_TOKEN = 'read-token-for-page-forms-0123'

describe('the operator page’s forms', () => {
  let receiver: Receiver
  let relay: Relay
  let admin: PageClient

  beforeAll(async () => {
    receiver = await startReceiver()
    relay = await startRelay(receiver.url, { readToken: READ_TOKEN })
    admin = new PageClient(relay.url)
    expect((await admin.signIn()).status).toBe(303)
  })
  afterAll(async () => {
    await relay.close()
    await receiver.close()
  })

  it('asks for the admin token or the read token, and takes either', async () => {
    const signIn = await new PageClient(relay.url).get('/')
    expect(signIn.body).toContain('<label>Admin token or read token <input type="password"')
    expect((await new PageClient(relay.url).signIn(READ_TOKEN)).status).toBe(303)
  })

  it('offers every delivery status in the filter, filtered included, and keeps it', async () => {
    const statusChoice = async (path: string) =>
      /<select name="status">([\s\S]*?)<\/select>/.exec((await admin.get(path)).body)?.[1] ?? ''
    const offered = await statusChoice('/?refresh=off')
    const values = [...offered.matchAll(/<option value="([^"]*)"/g)].map((m) => m[1])
    expect(values).toEqual(['', 'pending', 'delivered', 'failed', 'filtered'])
    const chosen = await statusChoice('/?status=filtered&refresh=off')
    expect(chosen).toContain('<option value="filtered" selected>filtered</option>')
    expect(chosen.match(/value="filtered"/g)).toHaveLength(1)
  })

  it('opens the replay form without an error; once submitted, says what is missing', async () => {
    const opened = await admin.get('/ui/replays/new?status=failed')
    expect(opened.status).toBe(200)
    expect(opened.body).toContain('<h1>Replay deliveries</h1>')
    expect(opened.body).not.toContain('role="alert"')
    expect(opened.body).toContain('<input type="hidden" name="counted" value="1">')

    const submitted = await admin.get('/ui/replays/new?status=failed&since=&until=&rate=&counted=1')
    expect(submitted.status).toBe(200)
    expect(submitted.body).toContain('<p class="error" role="alert">filter.since is required')
    // The mark is the form's own, not a filter field of the replay (that would be refused).
    const window = 'since=1h&until=2999-01-01T00:00:00Z'
    const counted = await admin.get(`/ui/replays/new?status=failed&${window}&counted=1`)
    expect(counted.body).not.toContain('role="alert"')
    expect(counted.body).toContain('Nothing matches')
  })
})
