import { request } from 'undici'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { Relay } from '../../../src/relay/index'
import { sseEvents } from '../../../src/cli/sse-events'
import { post, type Receiver, startReceiver, startRelay, track, waitForDelivery } from '../helpers'
import { PageClient } from '../console/page-client'

let receiver: Receiver
let relay: Relay
let client: PageClient

beforeEach(async () => {
  receiver = await startReceiver()
  relay = await startRelay(receiver.url)
  client = new PageClient(relay.url)
})
afterEach(async () => {
  await relay.close()
  await receiver.close()
})

/** The sum of the values the bars of the overview's chart titled `title` say. */
function chartTotal(body: string, title: string): number {
  const figure = body.split('<figure').find((f) => f.includes(`<figcaption class="label">${title} `))!
  return [...figure.matchAll(/<title>\d\d:\d\d UTC · (\d+) /g)].reduce((sum, [, n]) => sum + Number(n), 0)
}

describe('the live view and the overview’s charts', () => {
  it('draws the last hour on the overview, with no script allowed there', async () => {
    for (let i = 0; i < 3; i++) {
      const message = track()
      await post(`${relay.url}/v1/track`, message)
      await waitForDelivery(relay.url, 'delivered', message['messageId'] as string)
    }
    await client.signIn()
    const page = await client.get('/?refresh=off')
    expect(page.status).toBe(200)
    // The three may straddle a minute's end: their bars add up to three either way.
    expect(chartTotal(page.body, 'Ingested')).toBe(3)
    expect(chartTotal(page.body, 'Delivered')).toBe(3)
    expect(chartTotal(page.body, 'Dead-lettered')).toBe(0)
    expect(page.body).toMatch(/aria-label="Ingested, last 60 minutes: peak [1-3] msg\/min, this minute [0-3]"/)
    expect(page.body).toContain('href="/ui/live"')
    expect(page.headers['content-security-policy']).not.toContain('script-src')
  })

  it('serves /ui/live signed in, with its one same-origin script allowed on that page only', async () => {
    expect((await client.get('/ui/live')).body).toContain('action="/ui/sign-in"')
    await client.signIn()
    const page = await client.get('/ui/live')
    expect(page.status).toBe(200)
    expect(page.body).toContain('<script src="/ui/live.js"></script>')
    expect(page.headers['content-security-policy']).toContain("script-src 'self'")
    expect(page.headers['content-security-policy']).toContain("default-src 'none'")
    expect(page.headers['content-security-policy']).not.toContain('unsafe-inline')
    const script = await client.get('/ui/live.js')
    expect(script.headers['content-type']).toBe('text/javascript; charset=utf-8')
    expect(script.body).toContain("new EventSource('/v1/stream')")
  })

  it('lets the page’s session read /v1/stream, and refuses a reader with neither session nor token', async () => {
    const anonymous = await request(`${relay.url}/v1/stream`)
    expect(anonymous.statusCode).toBe(401)
    await anonymous.body.dump()
    await client.signIn()
    const controller = new AbortController()
    const stream = await request(`${relay.url}/v1/stream`, {
      headers: { cookie: client.cookie! },
      signal: controller.signal,
    })
    expect(stream.statusCode).toBe(200)
    const message = track({ messageId: 'seen-by-the-page' })
    await post(`${relay.url}/v1/track`, message)
    for await (const { event, data } of sseEvents(stream.body)) {
      if (event === 'ingested' && JSON.parse(data).messageId === 'seen-by-the-page') break
    }
    controller.abort()
  })
})
