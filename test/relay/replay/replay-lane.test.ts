import type { ServerResponse } from 'node:http'
import { afterEach, describe, expect, it } from 'vitest'
import { createRelay, type Relay } from '../../../src/relay/index'
import { startHttpReceiver, type HttpReceiver } from '../../support/http-receiver'
import { freshPostgresDatabase } from '../../support/postgres'
import { STORE_KINDS } from '../../support/stores'
import { startTcpProxy } from '../../support/tcp-proxy'
import { ADMIN_TOKEN, admin, adminGet, post, startRelay, track, waitFor, WRITE_KEY } from '../helpers'

// A receiver that answers at once, except the requests of messages `held` picks while holding is
// on: those it keeps unanswered (a stalled receiver) until the test lets them go.
async function stallingReceiver() {
  const held: ServerResponse[] = []
  let holding = false
  const server: HttpReceiver = await startHttpReceiver((_req, res, request) => {
    const messageId = String(JSON.parse(request.body.toString('utf8'))['messageId'])
    if (holding && messageId.startsWith('old-')) held.push(res)
    else res.writeHead(200).end('{}')
  })
  const messageIds = () => server.requests.map((r) => String(JSON.parse(r.body.toString('utf8'))['messageId']))
  return {
    url: `${server.origin}/hook`,
    server,
    held,
    messageIds,
    hold: (on: boolean) => {
      holding = on
    },
    /** Answers (or, `cut`, drops) every request held so far. */
    release: (cut = false) => {
      for (const res of held.splice(0)) cut ? res.destroy() : res.writeHead(200).end('{}')
    },
  }
}

async function deliveredCount(relay: Relay, prefix: string): Promise<number> {
  const { body } = await adminGet(`${relay.url}/v1/deliveries?status=delivered&limit=500`)
  return (body.deliveries as { messageId: string; replayOf?: number }[]).filter(
    (d) => d.messageId.startsWith(prefix) && d.replayOf === undefined,
  ).length
}

async function sendAll(relay: Relay, prefix: string, count: number): Promise<void> {
  const batch = Array.from({ length: count }, (_, i) => track({ messageId: `${prefix}${i}` }))
  expect((await post(`${relay.url}/v1/batch`, { batch })).status).toBe(200)
  await waitFor(
    async () => ((await deliveredCount(relay, prefix)) === count ? true : undefined),
    `${prefix}* delivered`,
  )
}

const window = () => ({ since: '1h', until: new Date(Date.now() + 60_000).toISOString() })

describe.each(STORE_KINDS)('the replay lane beside live traffic (%s)', (kind) => {
  const closing: (() => Promise<void>)[] = []
  afterEach(async () => {
    for (const close of closing.splice(0).reverse()) await close()
  })

  it('delivers live traffic while a replay is stalled on its receiver, as it does without the replay', async () => {
    const receiver = await stallingReceiver()
    closing.push(() => receiver.server.close())
    // One attempt at a time per source: a replay sharing the live lane would hold its only slot.
    const relay = await startRelay(receiver.url, { concurrency: 1 }, kind)
    closing.push(() => relay.close())
    await sendAll(relay, 'old-', 4)

    // Without a replay: live messages go through.
    await sendAll(relay, 'before-', 3)

    // With a replay stalled on its receiver: the same.
    receiver.hold(true)
    const { body: replay } = await post(`${relay.url}/v1/replays`, { filter: window(), ratePerSecond: 1000 }, admin)
    expect(replay.matched).toBe(7)
    await waitFor(() => (receiver.held.length > 0 ? true : undefined), 'the replay to stall on its receiver')
    await sendAll(relay, 'during-', 3)
    const stalled = (await adminGet(`${relay.url}/v1/replays/${replay.id}`)).body
    expect(stalled).toMatchObject({ state: expect.stringMatching(/running|done/), delivered: 0 })
    expect(receiver.held.length).toBeGreaterThan(0)

    // Let the receiver go: the replay finishes, every match once.
    receiver.hold(false)
    receiver.release()
    const done = await waitFor(async () => {
      const { body } = await adminGet(`${relay.url}/v1/replays/${replay.id}`)
      return body.state === 'done' && body.delivered === 7 ? body : undefined
    }, 'the replay to finish')
    expect(done).toMatchObject({ matched: 7, queued: 7, failed: 0 })
  })
})

describe('a relay killed mid-replay on PostgreSQL', () => {
  const closing: (() => Promise<void>)[] = []
  afterEach(async () => {
    for (const close of closing.splice(0).reverse()) await close()
  })

  it('leaves nothing missing: another relay on the database finishes the replay', async () => {
    const receiver = await stallingReceiver()
    closing.push(() => receiver.server.close())
    const target = new URL(await freshPostgresDatabase())
    const proxy = await startTcpProxy(Number(target.port))
    closing.push(() => proxy.close())
    const throughProxy = new URL(target)
    throughProxy.port = String(proxy.port)
    const options = (database: string) => ({
      port: 0,
      database,
      adminToken: ADMIN_TOKEN,
      allowPrivateNetworks: true,
      leaseTimeout: 1000,
      sources: [
        { name: 'web', writeKey: WRITE_KEY, destinations: { Webhooks: { webhooks: [{ url: receiver.url }] } } },
      ],
    })
    const first = await createRelay(options(throughProxy.toString()))
    closing.push(() => first.close())
    closing.push(() => proxy.restore())
    const count = 20
    await sendAll(first, 'old-', count)

    // The first relay queues part of the replay and holds what it sent, unanswered; then it dies
    // (its database is cut off: no renewal, no outcome, no more queueing).
    receiver.hold(true)
    const { body: replay } = await post(`${first.url}/v1/replays`, { filter: window(), ratePerSecond: 20 }, admin)
    expect(replay.matched).toBe(count)
    await waitFor(() => (receiver.held.length >= 2 ? true : undefined), 'the first relay to send part of the replay')
    await proxy.cut()
    receiver.release(true)
    receiver.hold(false)

    const second = await createRelay(options(target.toString()))
    closing.push(() => second.close())
    const done = await waitFor(
      async () => {
        const { body } = await adminGet(`${second.url}/v1/replays/${replay.id}`)
        return body.state === 'done' && body.delivered === count ? body : undefined
      },
      'the second relay to finish the replay',
      30_000,
    )
    expect(done).toEqual({
      id: replay.id,
      state: 'done',
      from: 'outbox',
      matched: count,
      queued: count,
      delivered: count,
      failed: 0,
    })
    const { body } = await adminGet(`${second.url}/v1/deliveries?limit=500`)
    const copies = (body.deliveries as { messageId: string; replayOf?: number; status: string }[]).filter(
      (d) => d.replayOf !== undefined,
    )
    expect(copies.map((d) => d.messageId).sort()).toEqual(Array.from({ length: count }, (_, i) => `old-${i}`).sort())
    expect(copies.every((d) => d.status === 'delivered')).toBe(true)
    // Each message reached the receiver as a replay (some twice: sent by the first relay, then again).
    const received = receiver.messageIds()
    for (let i = 0; i < count; i++) expect(received.filter((id) => id === `old-${i}`).length).toBeGreaterThanOrEqual(2)
  }, 60_000)
})
