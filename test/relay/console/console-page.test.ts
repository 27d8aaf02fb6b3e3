import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { Relay } from '../../../src/relay/index'
import { endpointId } from '../../../src/relay/store/endpoints'
import { adminGet, post, type Receiver, startReceiver, startRelay, track, waitFor, waitForDelivery } from '../helpers'
import { PageClient } from './page-client'

let receiver: Receiver
let relay: Relay
let client: PageClient

beforeEach(async () => {
  receiver = await startReceiver()
  receiver.respond((_req, res) => res.writeHead(404).end())
  relay = await startRelay(receiver.url)
  client = new PageClient(relay.url)
  await client.signIn()
})
afterEach(async () => {
  await relay.close()
  await receiver.close()
})

async function deadLetter(overrides: Record<string, unknown>) {
  const message = track(overrides)
  expect((await post(`${relay.url}/v1/track`, message)).status).toBe(200)
  return waitForDelivery(relay.url, 'failed', message['messageId'] as string)
}

describe("the console's forms and filters on the page", () => {
  it('answers an unknown or malformed filter with a 400 page naming it', async () => {
    for (const [query, message] of [
      ['stauts=failed', 'unknown parameter &quot;stauts&quot;'],
      ['since=yesterday', 'since must be an ISO 8601 time'],
      ['limit=5', 'unknown parameter &quot;limit&quot;'],
      ['q=u1&amp;userId=u1'.replace('&amp;', '&'), 'q finds a messageId or a userId'],
    ] as const) {
      const page = await client.get(`/?${query}`)
      expect(page.status, query).toBe(400)
      expect(page.body, query).toContain(message)
    }
  })

  it('offers "Retry all N" only on a list of dead letters, not on a search', async () => {
    const d1 = await deadLetter({ messageId: 'd1', userId: 'ada', event: 'Gone' })
    const d2 = await deadLetter({ messageId: 'd2', userId: 'bob', event: 'Gone' })
    const list = (await client.get('/?status=failed')).body
    expect(list).toContain('>Retry all 2</a>')
    // Each row's error starts with the HTTP status, however long the URL before it.
    expect(list).toContain('<td class="error"><strong>HTTP 404</strong> · ')
    expect((await client.get('/?status=failed&event=Gone&userId=ada')).body).toContain(
      'href="/ui/retry?status=failed&amp;event=Gone&amp;userId=ada">Retry all 1</a>',
    )
    expect((await client.get('/')).body).not.toContain('Retry all')
    const search = await client.get('/?status=failed&q=ada')
    expect(search.body).toContain(`href="/ui/deliveries/${d1.id}"`)
    expect(search.body).not.toContain(`href="/ui/deliveries/${d2.id}"`)
    expect(search.body).not.toContain('Retry all')
  })

  it('refuses a bulk retry or a pause without the CSRF token, changing nothing', async () => {
    await deadLetter({ messageId: 'd1' })
    expect((await client.post('/ui/retry', { status: 'failed' })).status).toBe(403)
    const id = endpointId(receiver.url)
    expect((await client.post(`/ui/endpoints/${id}/pause`, {})).status).toBe(403)
    const confirm = await client.get('/ui/retry?status=failed')
    expect(confirm.body).toContain('Retry 1 dead letter?')
    // From another site: refused, even with the token.
    const csrf = PageClient.csrfOf(confirm.body)
    expect(
      (await client.post('/ui/retry', { csrf, status: 'failed' }, { origin: 'https://evil.example' })).status,
    ).toBe(403)
    expect((await client.get('/?status=failed')).body).toContain('>Retry all 1</a>')
  })
})

describe("a delivery's page behind an open endpoint", () => {
  it('says the next attempt waits for the probe, and when that goes, instead of a stale retry time', async () => {
    const down = await startReceiver()
    down.respond((_req, res) => res.writeHead(500).end('{"error":"db pool exhausted"}'))
    const held = await startRelay(down.url, {
      breaker: { failureThreshold: 1, probeInterval: 3_600_000, maxProbeInterval: 3_600_000 },
    })
    try {
      const message = track({ messageId: 'behind-open' })
      expect((await post(`${held.url}/v1/track`, message)).status).toBe(200)
      const delivery = await waitFor(async () => {
        const { body } = await adminGet(`${held.url}/v1/deliveries?messageId=behind-open`)
        return body.deliveries[0]?.attempts.length > 0 ? body.deliveries[0] : undefined
      }, 'the first attempt')
      const page = new PageClient(held.url)
      await page.signIn()
      const body = (await page.get(`/ui/deliveries/${delivery.id}`)).body
      expect(body).toMatch(
        /<dt>Next attempt<\/dt><dd>when its endpoint answers a probe: <span class="mono">[^<]+<\/span> is open, next probe <time[^>]*>in \d+ min<\/time><\/dd>/,
      )
      expect(body).toContain('<h2>Its endpoints</h2>')
      expect(body).toContain('<strong>HTTP 500</strong>')
    } finally {
      await held.close()
      await down.close()
    }
  })
})
