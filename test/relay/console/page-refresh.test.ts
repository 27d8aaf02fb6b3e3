import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { Relay } from '../../../src/relay/index'
import { REFRESH_SECONDS } from '../../../src/relay/console/page/respond'
import { type Receiver, startReceiver, startRelay } from '../helpers'
import { PageClient } from './page-client'

let receiver: Receiver
let relay: Relay
let client: PageClient

beforeEach(async () => {
  receiver = await startReceiver()
  relay = await startRelay(receiver.url)
  client = new PageClient(relay.url)
  await client.signIn()
})
afterEach(async () => {
  await relay.close()
  await receiver.close()
})

const REFRESH = `<meta http-equiv="refresh" content="${REFRESH_SECONDS}">`

describe('the overview, refreshing itself', () => {
  it('reloads by itself with no script, under the same strict CSP, and says how to stop it', async () => {
    const page = await client.get('/?status=failed')
    expect(page.status).toBe(200)
    expect(page.body).toContain(REFRESH)
    expect(page.body).not.toContain('<script')
    expect(page.headers['content-security-policy']).toContain("default-src 'none'")
    expect(page.body).toContain(`Reloads every ${REFRESH_SECONDS} s.`)
    expect(page.body).toContain('<a href="/?status=failed&amp;refresh=off">Stop reloading</a>')
  })

  it('stops with ?refresh=off, and stays off through the filters and back on with a link', async () => {
    const page = await client.get('/?status=failed&refresh=off')
    expect(page.body).not.toContain('http-equiv="refresh"')
    expect(page.body).toContain('<input type="hidden" name="refresh" value="off">')
    expect(page.body).toContain('<a href="/?status=failed">Reload every few seconds</a>')
  })

  it('refuses any other refresh value with a 400 naming it', async () => {
    const page = await client.get('/?refresh=5')
    expect(page.status).toBe(400)
    expect(page.body).toContain('refresh can only be')
  })

  it("says which figures are this relay's and which the whole outbox's", async () => {
    const page = await client.get('/')
    expect(page.body).toMatch(/<h2>Last 5 minutes <span class="muted">· this relay only<\/span><\/h2>/)
    expect(page.body).toMatch(/<h2>Outbox <span class="muted">· every relay sharing this store<\/span><\/h2>/)
  })
})
