import { afterEach, describe, expect, it } from 'vitest'
import type { Store } from '../../../src/relay/store/store'
import { REPLAY_PENDING_LIMIT } from '../../../src/relay/store/replays'
import { openTestStore, STORE_KINDS } from '../../support/stores'
import { testDelivery } from '../fixtures/deliveries'

// The replays' store operations on both dialects: counts, queueing at the pace, claims, states, erasure.
describe.each(STORE_KINDS)('replay store (%s)', (kind) => {
  let store: Store | undefined
  let clock = 1_000_000
  const now = () => clock
  afterEach(async () => {
    await store?.close()
    store = undefined
  })

  async function seeded(count: number): Promise<Store> {
    store = await openTestStore(kind, now)
    await store.enqueue(Array.from({ length: count }, (_, i) => testDelivery(`m${i}`)))
    return store
  }

  it('counts originals only and makes new deliveries with their message id, marked replayOf, at the pace', async () => {
    const s = await seeded(5)
    const window = { since: clock - 1000, until: clock + 1000 }
    expect(await s.replays.count(window)).toBe(5)
    expect(await s.replays.count({ since: clock + 1, until: clock + 1000 })).toBe(0)
    const replay = await s.replays.create({ filter: window, url: undefined, ratePerSecond: 20 })
    expect(replay).toMatchObject({ state: 'running', matched: 5, queued: 0 })
    // 20 per second: 2 per step, the next step 100 ms later.
    expect(await s.replays.queue()).toEqual({ queued: 2, nextIn: 100 })
    expect(await s.replays.queue()).toEqual({ queued: 0, nextIn: 100 })
    clock += 100
    expect((await s.replays.queue()).queued).toBe(2)
    clock += 100
    expect((await s.replays.queue()).queued).toBe(1)
    expect(await s.replays.get(replay.id)).toMatchObject({ state: 'done', matched: 5, queued: 5 })
    // Replays' own deliveries never match a filter, and the live claim passes over them.
    expect(await s.replays.count(window)).toBe(5)
    expect(await s.claim({ source: 'web', limit: 100, owner: 'live', leaseMs: 1000 })).toHaveLength(5)
    const claimed = await s.replays.claim({ source: 'web', limit: 100, owner: 'r', leaseMs: 1000 })
    expect(claimed.map((d) => d.message.messageId).sort()).toEqual(['m0', 'm1', 'm2', 'm3', 'm4'])
    expect(claimed.every((d) => d.replayId === replay.id && d.url === undefined)).toBe(true)
    await s.record(claimed.map((d) => ({ id: d.id, at: clock, requests: [], next: { status: 'delivered' } })))
    const page = await s.find({ limit: 20 })
    const replayed = page.deliveries.filter((d) => d.replayOf !== undefined)
    expect(replayed).toHaveLength(5)
    const originals = new Map(page.deliveries.filter((d) => d.replayOf === undefined).map((d) => [d.id, d.messageId]))
    for (const d of replayed) expect(originals.get(d.replayOf!)).toBe(d.messageId)
    expect(await s.replays.get(replay.id)).toMatchObject({ delivered: 5, failed: 0 })
    // A client sending one of the messages again is still refused as a duplicate.
    expect(await s.enqueue([testDelivery('m0')])).toBe(0)
  })

  it('holds ratePerSecond however often relays step, and makes no burst after a late step', async () => {
    const s = await seeded(80)
    const { id } = await s.replays.create({ filter: { since: 0, until: clock }, url: undefined, ratePerSecond: 7 })
    const queuedBy: number[] = []
    // Three relays stepping every 10 ms of the store's clock for 3 seconds; each queued delivery is settled at once.
    for (let tick = 0; tick < 300; tick++) {
      for (let relay = 0; relay < 3; relay++) await s.replays.queue()
      const claimed = await s.replays.claim({ source: 'web', limit: 100, owner: 'r', leaseMs: 1000 })
      await s.record(claimed.map((d) => ({ id: d.id, at: clock, requests: [], next: { status: 'delivered' } })))
      queuedBy.push((await s.replays.get(id))!.queued)
      clock += 10
    }
    // At most 7 in any second (one step of 1, then 143 ms before the next), and close to it: a step
    // comes at most one 10 ms tick late here.
    for (let end = 100; end < queuedBy.length; end++)
      expect(queuedBy[end]! - queuedBy[end - 100]!).toBeLessThanOrEqual(7)
    const total = queuedBy.at(-1)!
    expect(total).toBeGreaterThanOrEqual(19)
    expect(total).toBeLessThanOrEqual(21)
    // A relay stepping late (10 s of nothing) makes one step's worth, not the 70 it "missed".
    clock += 10_000
    for (let relay = 0; relay < 3; relay++) await s.replays.queue()
    expect((await s.replays.get(id))!.queued).toBe(total + 1)
    // 1,800 store calls: PostgreSQL on a loaded 2-core machine takes longer than the default 20 s.
  }, 90_000)

  it('stops making deliveries while its pending ones are at the limit', async () => {
    const s = await seeded(REPLAY_PENDING_LIMIT + 20)
    await s.replays.create({ filter: { since: 0, until: clock }, url: 'https://b.test/hook', ratePerSecond: 10_000 })
    let queued = 0
    for (let i = 0; i < 10; i++) {
      queued += (await s.replays.queue()).queued
      clock += 1000
    }
    expect(queued).toBe(REPLAY_PENDING_LIMIT)
    const claimed = await s.replays.claim({ source: 'web', limit: 10, owner: 'r', leaseMs: 1000 })
    expect(claimed[0]!.url).toBe('https://b.test/hook')
    await s.record(claimed.map((d) => ({ id: d.id, at: clock, requests: [], next: { status: 'delivered' } })))
    expect((await s.replays.queue()).queued).toBe(10)
  })

  it('pauses, resumes and cancels; a cancel settles what was not sent', async () => {
    const s = await seeded(4)
    const { id } = await s.replays.create({ filter: { since: 0, until: clock }, url: undefined, ratePerSecond: 2 })
    expect((await s.replays.queue()).queued).toBe(1)
    expect(await s.replays.change(id, 'pause')).toMatchObject({ state: 'paused' })
    expect(await s.replays.change(id, 'pause')).toMatchObject({ refused: { state: 'paused' } })
    clock += 10_000
    expect(await s.replays.queue()).toEqual({ queued: 0, nextIn: undefined })
    // A paused replay's pending deliveries wait.
    expect(await s.replays.claim({ source: 'web', limit: 10, owner: 'r', leaseMs: 1000 })).toEqual([])
    expect(await s.replays.change(id, 'resume')).toMatchObject({ state: 'running' })
    expect((await s.replays.queue()).queued).toBe(1)
    expect(await s.replays.change(id, 'cancel')).toMatchObject({ state: 'cancelled', queued: 2, failed: 2 })
    expect(await s.replays.change(id, 'resume')).toMatchObject({ refused: { state: 'cancelled' } })
    expect(await s.replays.change(id + 100, 'cancel')).toBeUndefined()
    expect((await s.replays.list()).map((r) => r.id)).toEqual([id])
  })

  it('prunes a replay that ended before the retention, once none of its copies is pending', async () => {
    const s = await seeded(1)
    const { id } = await s.replays.create({
      filter: { since: 0, until: clock },
      url: 'https://b.test/h',
      ratePerSecond: 100,
    })
    // One original, room for more: done at once.
    const doneAt = clock
    expect((await s.replays.queue()).queued).toBe(1)
    expect((await s.replays.get(id))!.state).toBe('done')
    clock += 1000
    // Its copy is still pending: it needs the replay's row to find its URL.
    expect(await s.replays.prune(clock + 1)).toBe(0)
    const claimed = await s.replays.claim({ source: 'web', limit: 10, owner: 'r', leaseMs: 1000 })
    await s.record(claimed.map((d) => ({ id: d.id, at: clock, requests: [], next: { status: 'delivered' } })))
    expect(await s.replays.prune(doneAt)).toBe(0)
    expect(await s.replays.prune(doneAt + 1)).toBe(1)
    expect(await s.replays.get(id)).toBeUndefined()
  })

  it("erases a user's messages: settled bodies gone, dead letters settled, pending ones sent, none replayed", async () => {
    const s = await seeded(1)
    const gone = (id: string) => ({
      ...testDelivery(id),
      json: JSON.stringify({ type: 'track', userId: 'gone', event: 'E', messageId: id }),
    })
    await s.enqueue([gone('delivered'), gone('failed')])
    const claimed = await s.claim({ source: 'web', limit: 10, owner: 'live', leaseMs: 1000 })
    const idOf = (messageId: string) => claimed.find((d) => d.message.messageId === messageId)!.id
    await s.record([
      { id: idOf('delivered'), at: clock, requests: [], next: { status: 'delivered' } },
      {
        id: idOf('failed'),
        at: clock,
        requests: [{ url: 'https://a.test/h', status: 500, ms: 3, responseBody: 'gone was here' }],
        next: { status: 'failed', error: 'HTTP 500' },
      },
    ])
    await s.enqueue([gone('pending')])
    expect(await s.replays.count({ since: 0, until: clock })).toBe(4)
    expect(await s.replays.eraseUser('gone')).toBe(3)
    expect(await s.replays.eraseUser('gone')).toBe(0) // once is enough: nothing is erased twice
    expect(await s.replays.count({ since: 0, until: clock })).toBe(1)
    expect(await s.replays.count({ userId: 'gone', since: 0, until: clock })).toBe(0)
    const find = async (messageId: string) => (await s.find({ messageId, limit: 5 })).deliveries[0]!
    expect(await find('delivered')).toMatchObject({
      status: 'delivered',
      message: { type: 'track', messageId: 'delivered', erased: true },
    })
    const failed = await find('failed')
    expect(failed).toMatchObject({ status: 'filtered', message: { erased: true } })
    expect(JSON.stringify(failed)).not.toContain('gone')
    expect(await s.retry(failed.id)).toBe('not-failed')
    expect(await find('pending')).toMatchObject({ status: 'pending', message: { userId: 'gone' } })
  })
})

describe('the replay statements of the two dialects', () => {
  it('have the same names, but for what one dialect alone needs', async () => {
    const { SQLITE_REPLAY_STATEMENTS } = await import('../../../src/relay/store/sqlite/sqlite-replays')
    const { POSTGRES_REPLAY_STATEMENTS } = await import('../../../src/relay/store/postgres/postgres-replays')
    // SQLite reads the claimed copies' targets apart (its RETURNING names only the updated table's
    // columns); PostgreSQL reads the store's clock at the server.
    const sqlite = Object.keys(SQLITE_REPLAY_STATEMENTS).filter((name) => name !== 'targets')
    const postgres = Object.keys(POSTGRES_REPLAY_STATEMENTS).filter((name) => name !== 'clock')
    expect(sqlite.sort()).toEqual(postgres.sort())
  })
})
