import type { ServerResponse } from 'node:http'
import { afterEach, describe, expect, it } from 'vitest'
import type { Relay } from '../../../src/relay/index'
import { STORE_KINDS, type StoreKind } from '../../support/stores'
import { request } from 'undici'
import { admin, adminGet, post, startRelay, track, waitFor, WRITE_KEY } from '../helpers'
import { type CountingReceiver, countingReceiver, leastSpanMs } from './receiver'
import { PageClient } from '../console/page-client'

// The per-URL limits on a real relay (docs/delivery-controls.md): a receiver that counts what
// arrives, how much at once and when.

describe.each(STORE_KINDS)('per-URL limits on one relay (%s)', (kind: StoreKind) => {
  const closing: (() => Promise<void>)[] = []
  afterEach(async () => {
    for (const close of closing.splice(0).reverse()) await close()
  })

  async function relayTo(receiver: CountingReceiver, limits: Record<string, number>): Promise<Relay> {
    const Webhooks = { webhooks: [{ url: receiver.url, ...limits }] }
    const relay = await startRelay(
      receiver.url,
      { concurrency: 16, sources: [{ name: 'web', writeKey: WRITE_KEY, destinations: { Webhooks } }] },
      kind,
    )
    closing.push(() => relay.close())
    return relay
  }

  const send = (relay: Relay, count: number, prefix = 'm') =>
    post(`${relay.url}/v1/batch`, {
      batch: Array.from({ length: count }, (_, i) => track({ messageId: `${prefix}${i}`, userId: `u${i % 3}` })),
    })

  const scrape = async (relay: Relay) => (await request(`${relay.url}/metrics`, { headers: admin })).body.text()

  const delivered = async (relay: Relay) =>
    ((await adminGet(`${relay.url}/v1/deliveries?status=delivered&limit=500`)).body.deliveries as any[]).length

  it('holds maxInFlight: never more requests at once than the limit', async () => {
    const receiver = await countingReceiver()
    closing.push(() => receiver.close())
    const held: ServerResponse[] = []
    receiver.respond((_req, res) => void held.push(res))
    const relay = await relayTo(receiver, { maxInFlight: 2 })
    await send(relay, 8)
    await waitFor(() => (receiver.inFlight === 2 ? true : undefined), 'two requests in flight')
    // The endpoints view shows the limit and every relay's requests in flight; /metrics what waits.
    const [endpoint] = (await adminGet(`${relay.url}/v1/endpoints`)).body.endpoints
    expect(endpoint.limit).toEqual({ maxInFlight: 2, inFlight: 2 })
    // A delivery waiting says why, in the API and on the page, with no attempt.
    const pending = (await adminGet(`${relay.url}/v1/deliveries?status=pending&limit=10`)).body.deliveries as any[]
    expect(pending.map((d) => d.waiting)).toContain(`held: 2 in flight on ${receiver.url}`)
    const waiter = pending.find((d) => d.waiting !== undefined)
    expect(waiter.attempts).toEqual([])
    expect((await adminGet(`${relay.url}/v1/deliveries/${waiter.id}`)).body.waiting).toBe(
      `held: 2 in flight on ${receiver.url}`,
    )
    const page = new PageClient(relay.url)
    await page.signIn()
    expect((await page.get(`/ui/deliveries/${waiter.id}`)).body).toMatch(
      /<dt>Waiting<\/dt><dd>held: 2 in flight on http:\/\/127\.0\.0\.1:\d+\/hook<\/dd>/,
    )
    const metrics = await scrape(relay)
    expect(metrics).toMatch(/^tracklet_endpoint_max_in_flight\{url="[^"]+"\} 2$/m)
    expect(Number(/^tracklet_endpoint_waiting\{url="[^"]+"\} (\d+)$/m.exec(metrics)?.[1])).toBe(6)
    const heldTotal = Number(
      /^tracklet_endpoint_held_total\{url="[^"]+",reason="in_flight"\} (\d+)$/m.exec(metrics)?.[1],
    )
    expect(heldTotal).toBeGreaterThanOrEqual(6)
    // Let the slots pass round a few times while the rest wait.
    const answer = setInterval(() => {
      for (const res of held.splice(0)) res.writeHead(200).end()
    }, 20)
    closing.push(async () => clearInterval(answer))
    await waitFor(async () => ((await delivered(relay)) === 8 ? true : undefined), 'all eight delivered')
    expect(receiver.mostInFlight).toBe(2)
    expect(new Set(receiver.ids).size).toBe(8)
  })

  it('holds ratePerSecond: never faster than the rate after a second’s burst', async () => {
    const receiver = await countingReceiver()
    closing.push(() => receiver.close())
    const rate = 20
    const relay = await relayTo(receiver, { ratePerSecond: rate })
    await send(relay, 45)
    await waitFor(async () => ((await delivered(relay)) === 45 ? true : undefined), 'all delivered', 20_000)
    const span = receiver.times.at(-1)! - receiver.times[0]!
    // A lower bound only: a slow machine makes it slower, never faster.
    expect(span).toBeGreaterThanOrEqual(leastSpanMs(45, rate) * 0.9)
  })

  it('a 429 with Retry-After holds the URL and costs no attempt', async () => {
    const receiver = await countingReceiver()
    closing.push(() => receiver.close())
    receiver.respond((_req, res, index) => {
      if (index === 0) res.writeHead(429, { 'retry-after': '1' }).end()
      else res.writeHead(200).end()
    })
    const relay = await relayTo(receiver, { maxInFlight: 4 })
    await send(relay, 1, 'held')
    const first = await waitFor(async () => {
      const list = (await adminGet(`${relay.url}/v1/deliveries?limit=10`)).body.deliveries as any[]
      return list[0]?.lastError?.includes('429') ? list[0] : undefined
    }, 'the hold in the delivery log')
    expect(first.status).toBe('pending')
    expect(first.lastError).toBe(`held: receiver asked to retry after 1 s (429) on ${receiver.url}`)
    const done = await waitFor(async () => {
      const view = (await adminGet(`${relay.url}/v1/deliveries/${first.id}`)).body
      return view.status === 'delivered' ? view : undefined
    }, 'delivered after the hold')
    // The 429 is not an attempt: the log holds the one request that was answered 200.
    expect(done.attempts.map((a: any) => a.status)).toEqual([200])
    expect(receiver.ids).toEqual(['held0', 'held0'])
    expect(receiver.times[1]! - receiver.times[0]!).toBeGreaterThanOrEqual(900)
  })
})
