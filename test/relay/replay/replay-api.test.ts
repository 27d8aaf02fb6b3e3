import { afterEach, describe, expect, it } from 'vitest'
import type { Relay } from '../../../src/relay/index'
import { STORE_KINDS, type StoreKind } from '../../support/stores'
import { admin, adminGet, post, type Receiver, startReceiver, startRelay, track, waitFor, WRITE_KEY } from '../helpers'

// The replays of the admin API on a real relay and real receivers (docs/replay.md).
describe.each(STORE_KINDS)('replays through the admin API (%s)', (kind: StoreKind) => {
  const closing: (() => Promise<void>)[] = []
  afterEach(async () => {
    for (const close of closing.splice(0).reverse()) await close()
  })

  // A relay whose source `web` sends to two receivers, A and B.
  async function twoReceivers(): Promise<{ relay: Relay; a: Receiver; b: Receiver }> {
    const a = await startReceiver()
    const b = await startReceiver()
    const relay = await startRelay(
      a.url,
      {
        sources: [
          {
            name: 'web',
            writeKey: WRITE_KEY,
            destinations: { Webhooks: { webhooks: [{ url: a.url }, { url: `${b.url}?token=t0ps3cret` }] } },
          },
        ],
      },
      kind,
    )
    closing.push(
      () => relay.close(),
      () => a.close(),
      () => b.close(),
    )
    return { relay, a, b }
  }

  async function sendAndSettle(relay: Relay, messages: Record<string, unknown>[]): Promise<void> {
    expect((await post(`${relay.url}/v1/batch`, { batch: messages })).status).toBe(200)
    await waitFor(async () => {
      const { body } = await adminGet(`${relay.url}/v1/deliveries?status=delivered&limit=500`)
      return body.deliveries.length >= messages.length ? true : undefined
    }, 'every message delivered')
  }

  const window = () => ({ since: '1h', until: new Date(Date.now() + 60_000).toISOString() })

  it("counts a dry run's matches, delivered ones included, and refuses what it cannot replay", async () => {
    const { relay } = await twoReceivers()
    await sendAndSettle(relay, [
      ...Array.from({ length: 3 }, () => track({ userId: 'ann' })),
      ...Array.from({ length: 2 }, () => track({ userId: 'bob', event: 'Paid' })),
    ])
    const dry = (filter: Record<string, unknown>) =>
      post(`${relay.url}/v1/replays`, { filter: { ...window(), ...filter }, dryRun: true }, admin)
    expect(await dry({})).toEqual({ status: 200, body: { matched: 5 } })
    expect((await dry({ userId: 'ann' })).body).toEqual({ matched: 3 })
    expect((await dry({ event: 'Paid', status: 'delivered' })).body).toEqual({ matched: 2 })
    expect((await dry({ status: 'failed' })).body).toEqual({ matched: 0 })
    expect((await dry({ since: new Date(Date.now() + 30_000).toISOString() })).body).toEqual({ matched: 0 })
    // A dry run starts nothing.
    expect((await adminGet(`${relay.url}/v1/replays`)).body).toEqual({ replays: [] })

    const refused = await post(
      `${relay.url}/v1/replays`,
      { filter: { source: 'web' }, to: { url: 'ftp://elsewhere.test/hook' }, ratePerSecond: 0, extra: 1 },
      admin,
    )
    expect(refused.status).toBe(400)
    expect(refused.body.error.code).toBe('ERR_INVALID_BODY')
    for (const problem of [
      '"extra"',
      'filter.since is required',
      'to.url must be a full http: or https: URL',
      'ratePerSecond',
    ])
      expect(refused.body.error.message).toContain(problem)
    const noSource = await post(`${relay.url}/v1/replays`, { filter: window(), to: { url: 'x' } }, admin)
    expect(noSource.body.error.message).toContain('to.url needs filter.source')
    const unauthorised = await post(`${relay.url}/v1/replays`, { filter: window() }, {})
    expect(unauthorised.status).toBe(401)
  })

  it('replays to a second URL every match once, with its messageId, marked replayOf in the delivery log', async () => {
    const { relay, a, b } = await twoReceivers()
    const messages = Array.from({ length: 6 }, (_, i) => track({ messageId: `old-${i}` }))
    await sendAndSettle(relay, messages)
    await waitFor(() => (b.received.length === 6 ? true : undefined), 'B to get the live deliveries')
    const beforeA = a.received.length
    const started = await post(
      `${relay.url}/v1/replays`,
      { filter: { ...window(), source: 'web' }, to: { url: `${b.url}?token=t0ps3cret` }, ratePerSecond: 1000 },
      admin,
    )
    expect(started).toEqual({ status: 202, body: { id: expect.any(Number), matched: 6 } })
    const { id } = started.body
    const done = await waitFor(async () => {
      const { body } = await adminGet(`${relay.url}/v1/replays/${id}`)
      return body.state === 'done' && body.delivered === 6 ? body : undefined
    }, 'the replay delivered')
    expect(done).toEqual({ id, state: 'done', from: 'outbox', matched: 6, queued: 6, delivered: 6, failed: 0 })
    const replayed = b.received.slice(6).map((r) => r.body['messageId'])
    expect(replayed.sort()).toEqual(messages.map((m) => m['messageId']).sort())
    expect(a.received.length).toBe(beforeA)
    const log = (await adminGet(`${relay.url}/v1/deliveries?messageId=old-0`)).body.deliveries
    expect(log).toHaveLength(2)
    const [copy, original] = log
    expect(copy.replayOf).toBe(original.id)
    expect(original.replayOf).toBeUndefined()
    // The replay's own deliveries are never matched by another replay.
    const again = await post(`${relay.url}/v1/replays`, { filter: window(), dryRun: true }, admin)
    expect(again.body).toEqual({ matched: 6 })
    expect((await adminGet(`${relay.url}/v1/replays`)).body.replays).toEqual([done])
  })

  it('pauses, resumes and cancels, refusing what a state does not allow', async () => {
    const { relay } = await twoReceivers()
    await sendAndSettle(
      relay,
      Array.from({ length: 3 }, () => track()),
    )
    const { body } = await post(`${relay.url}/v1/replays`, { filter: window(), ratePerSecond: 0.01 }, admin)
    const act = (action: string, id = body.id) => post(`${relay.url}/v1/replays/${id}/${action}`, {}, admin)
    expect((await act('pause')).body).toMatchObject({ id: body.id, state: 'paused', matched: 3 })
    const twice = await act('pause')
    expect(twice.status).toBe(409)
    expect(twice.body.error).toEqual({
      code: 'ERR_REPLAY_STATE',
      message: `replay ${body.id} is paused: it cannot pause`,
    })
    expect((await act('resume')).body.state).toBe('running')
    expect((await act('cancel')).body.state).toBe('cancelled')
    expect((await act('resume')).status).toBe(409)
    expect((await act('cancel', 9999)).status).toBe(404)
    expect((await adminGet(`${relay.url}/v1/replays/nope`)).status).toBe(404)
  })

  it('sends nothing of a deleted user again: their messages are erased before any replay', async () => {
    const { relay, a } = await twoReceivers()
    await sendAndSettle(relay, [
      track({ userId: 'gone', messageId: 'g1' }),
      track({ userId: 'gone', messageId: 'g2' }),
      track({ userId: 'kept', messageId: 'k1' }),
    ])
    expect((await post(`${relay.url}/v1/deletions`, { userId: 'gone' }, admin)).status).toBe(202)
    await waitFor(() => (a.received.some((r) => r.body['type'] === 'delete') ? true : undefined), 'the delete message')
    const before = a.received.length
    const { body } = await post(`${relay.url}/v1/replays`, { filter: window(), ratePerSecond: 1000 }, admin)
    expect(body.matched).toBe(2) // k1 and the delete message itself
    await waitFor(async () => {
      const replay = (await adminGet(`${relay.url}/v1/replays/${body.id}`)).body
      return replay.state === 'done' && replay.delivered === 2 ? true : undefined
    }, 'the replay delivered')
    const replayed = a.received.slice(before).map((r) => r.body)
    expect(replayed.map((m) => m['type']).sort()).toEqual(['delete', 'track'])
    expect(replayed.find((m) => m['type'] === 'track')?.['messageId']).toBe('k1')
    const erased = (await adminGet(`${relay.url}/v1/deliveries?messageId=g1`)).body.deliveries[0]
    expect(erased.message).toEqual({ type: 'track', messageId: 'g1', erased: true })
    expect(JSON.stringify(erased)).not.toContain('gone')
  })
})
