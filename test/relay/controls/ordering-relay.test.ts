import type { ServerResponse } from 'node:http'
import { request } from 'undici'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Relay } from '../../../src/relay/index'
import { STORE_KINDS, type StoreKind } from '../../support/stores'
import { admin, adminGet, basic, post, startRelay, track, WRITE_KEY, waitFor } from '../helpers'
import { type CountingReceiver, countingReceiver } from './receiver'
import { inversions } from './ordering-support'
import { PageClient } from '../console/page-client'
import { orderWaitText } from '../../../src/relay/console/order-wait'

// Ordered delivery per user on a real relay (docs/delivery-controls.md, "Ordering"): one relay per
// store with two sources to one counting receiver, `web` ordered and `plain` not.

const PLAIN_KEY = 'wk-test-plain'

describe.each(STORE_KINDS)('ordered delivery on one relay (%s)', (kind: StoreKind) => {
  let receiver: CountingReceiver
  let relay: Relay
  // Requests the test answers itself, by message id; every other one gets 200 at once.
  const held = new Map<string, ServerResponse>()
  const holding = new Set<string>()

  beforeAll(async () => {
    receiver = await countingReceiver()
    receiver.respond((_req, res, index) => {
      const id = receiver.ids[index]!
      if (holding.delete(id)) held.set(id, res)
      else res.writeHead(200).end()
    })
    const webhooks = [{ url: receiver.url }]
    relay = await startRelay(
      receiver.url,
      {
        sources: [
          { name: 'web', writeKey: WRITE_KEY, destinations: { Webhooks: { webhooks, ordered: true } } },
          { name: 'plain', writeKey: PLAIN_KEY, destinations: { Webhooks: { webhooks } } },
        ],
      },
      kind,
    )
  })
  afterAll(async () => {
    for (const res of held.values()) res.destroy()
    await relay?.close()
    await receiver?.close()
  })

  const answer = (id: string, status: number) => {
    const res = held.get(id)!
    held.delete(id)
    res.writeHead(status).end()
  }
  const arrived = (id: string) => receiver.ids.filter((x) => x === id).length
  const waitArrived = (id: string, times = 1) =>
    waitFor(() => (arrived(id) >= times ? true : undefined), `${id} to arrive ${times} time(s)`)
  const deliveryOf = async (messageId: string) =>
    (await adminGet(`${relay.url}/v1/deliveries?messageId=${messageId}`)).body.deliveries[0]
  const statusOf = async (messageId: string) => (await deliveryOf(messageId))?.status
  const send = (messages: { id: string; user: string }[], key = WRITE_KEY) =>
    post(
      `${relay.url}/v1/batch`,
      { batch: messages.map(({ id, user }) => track({ messageId: id, userId: user })) },
      { authorization: basic(key) },
    )

  it("holds a user's later deliveries behind one being retried, and lets the other users' go", async () => {
    const sent = [
      { id: 'a1', user: 'A' },
      { id: 'b1', user: 'B' },
      { id: 'a2', user: 'A' },
      { id: 'b2', user: 'B' },
      { id: 'a3', user: 'A' },
      { id: 'b3', user: 'B' },
    ]
    holding.add('a1')
    expect((await send(sent)).status).toBe(200)
    await waitArrived('a1')
    for (const id of ['b1', 'b2', 'b3'])
      await waitFor(async () => ((await statusOf(id)) === 'delivered' ? true : undefined), id)
    expect(arrived('a2') + arrived('a3')).toBe(0)

    // Why a2 waits, in the delivery log and on /metrics.
    const a1 = await deliveryOf('a1')
    const a2 = await deliveryOf('a2')
    const shown = (await adminGet(`${relay.url}/v1/deliveries/${a2.id}`)).body
    expect(shown.waitingBehind).toBe(a1.id)
    expect((await adminGet(`${relay.url}/v1/deliveries/${a1.id}`)).body.waitingBehind).toBeUndefined()
    const metrics = await (await request(`${relay.url}/metrics`, { headers: admin })).body.text()
    expect(metrics).toMatch(/^tracklet_deliveries_waiting_for_order\{source="web",destination="Webhooks"\} 2$/m)
    // The operator page's delivery says it too, with a link to the one it waits behind.
    const page = new PageClient(relay.url)
    await page.signIn()
    const html = (await page.get(`/ui/deliveries/${a2.id}`)).body
    expect(html).toContain(orderWaitText(a1.id))
    expect(html).toContain(`<a href="/ui/deliveries/${a1.id}">`)

    // Answered 500 twice, then 200: a2 and a3 only after it, in order.
    holding.add('a1')
    answer('a1', 500)
    await waitArrived('a1', 2)
    expect(arrived('a2')).toBe(0)
    answer('a1', 500)
    await waitFor(async () => ((await statusOf('a3')) === 'delivered' ? true : undefined), 'a3 delivered', 20_000)
    expect(receiver.ids.filter((id) => id.startsWith('a'))).toEqual(['a1', 'a1', 'a1', 'a2', 'a3'])
    expect(inversions(receiver, sent)).toBe(0)
  })

  it('lets the rest go once the first is dead-lettered', async () => {
    holding.add('c1')
    expect(
      (
        await send([
          { id: 'c1', user: 'C' },
          { id: 'c2', user: 'C' },
          { id: 'd1', user: 'D' },
        ])
      ).status,
    ).toBe(200)
    await waitArrived('c1')
    await waitFor(async () => ((await statusOf('d1')) === 'delivered' ? true : undefined), 'd1 delivered')
    expect(arrived('c2')).toBe(0)
    // A 400 is not retried: the delivery is dead-lettered, and no longer holds c2.
    answer('c1', 400)
    await waitFor(async () => ((await statusOf('c2')) === 'delivered' ? true : undefined), 'c2 delivered')
    expect(await statusOf('c1')).toBe('failed')
  })

  it('holds nothing for a destination without ordered', async () => {
    holding.add('p1')
    expect(
      (
        await send(
          [
            { id: 'p1', user: 'P' },
            { id: 'p2', user: 'P' },
          ],
          PLAIN_KEY,
        )
      ).status,
    ).toBe(200)
    await waitArrived('p1')
    // The same user's next message goes while the first is in flight.
    await waitArrived('p2')
    answer('p1', 200)
    await waitFor(async () => ((await statusOf('p1')) === 'delivered' ? true : undefined), 'p1 delivered')
  })
})
