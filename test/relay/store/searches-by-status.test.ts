import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { DeliveryFilter, NewDelivery, Store } from '../../../src/relay/store/store'
import { openTestStore, STORE_KINDS } from '../../support/stores'

// The delivery log's searches by status, the dead-letter counts of a bulk replay and a replay's
// count of its window, on both stores: on PostgreSQL a pending or dead status is read from the
// queue first (alone, or beside the route, source or time; joined when a field only the messages
// have is given), a settled one from the history; a bulk replay whose filter the queue's columns
// answer reads the queue alone; on SQLite a replay counts and starts through the originals' time
// index (docs/postgres.md, "Searches at 1,000,000 rows"). Every shape must find the same rows.
const T0 = Date.parse('2026-01-01T00:00:00.000Z')
const COUNT = 120

// Message i: created at T0 + i s, from web (even) or ios (odd), user-(i % 6), event by i % 3;
// its delivery dead (i % 5 = 0), still pending (1), filtered (2) or delivered (3, 4).
function message(i: number): NewDelivery {
  const json = {
    type: 'track',
    messageId: `m${i}`,
    userId: `user-${i % 6}`,
    event: i % 3 === 0 ? 'Order Completed' : 'Page Viewed',
  }
  const source = i % 2 === 0 ? 'web' : 'ios'
  return { source, destination: 'Webhooks', messageId: json.messageId, type: 'track', json: JSON.stringify(json) }
}

const STATUS_OF = ['failed', 'pending', 'filtered', 'delivered', 'delivered'] as const
const status = (i: number) => STATUS_OF[i % 5]!

// The message ids `keep` selects, newest first (as every search answers).
function expected(keep: (i: number) => boolean): string[] {
  return Array.from({ length: COUNT }, (_, i) => COUNT - 1 - i)
    .filter(keep)
    .map((i) => `m${i}`)
}

describe.each(STORE_KINDS)('searches by status, dead letters and replay counts (%s)', (kind) => {
  let store: Store
  let clock = T0

  beforeAll(async () => {
    store = await openTestStore(kind, () => clock)
    for (let i = 0; i < COUNT; i++) {
      clock = T0 + i * 1000
      await store.enqueue([message(i)])
    }
    const all = await store.list({ after: 0, limit: 1000 })
    const index = (messageId: string) => Number(messageId.slice(1))
    await store.record(
      all
        .filter((d) => status(index(d.messageId)) !== 'pending')
        .map((d) => {
          const next = status(index(d.messageId))
          return {
            id: d.id,
            at: clock,
            requests: [],
            next:
              next === 'failed'
                ? { status: 'failed' as const, error: 'HTTP 500' }
                : next === 'filtered'
                  ? { status: 'filtered' as const, error: 'dropped by its function' }
                  : { status: 'delivered' as const },
          }
        }),
    )
  })
  afterAll(async () => {
    await store.close()
  })

  // Every match, newest first, a page of 7 at a time through the cursor.
  async function everyPage(filter: DeliveryFilter): Promise<string[]> {
    const seen: string[] = []
    let cursor: string | undefined
    do {
      const page = await store.find({ ...filter, cursor, limit: 7 })
      expect(page.deliveries.length).toBeLessThanOrEqual(7)
      seen.push(...page.deliveries.map((d) => d.messageId))
      cursor = page.next
    } while (cursor !== undefined)
    return seen
  }

  it.each<[string, DeliveryFilter, (i: number) => boolean]>([
    ['pending', { status: 'pending' }, (i) => status(i) === 'pending'],
    ['failed', { status: 'failed' }, (i) => status(i) === 'failed'],
    ['delivered', { status: 'delivered' }, (i) => status(i) === 'delivered'],
    ['filtered', { status: 'filtered' }, (i) => status(i) === 'filtered'],
    ['failed and source', { status: 'failed', source: 'web' }, (i) => status(i) === 'failed' && i % 2 === 0],
    [
      'pending and a time span',
      { status: 'pending', since: T0 + 30_000, until: T0 + 71_000 },
      (i) => status(i) === 'pending' && i >= 30 && i <= 71,
    ],
    [
      'failed and a route',
      { status: 'failed', routes: [{ source: 'ios', destination: 'Webhooks' }] },
      (i) => status(i) === 'failed' && i % 2 === 1,
    ],
    ['failed and a user', { status: 'failed', userId: 'user-0' }, (i) => status(i) === 'failed' && i % 6 === 0],
    [
      'pending and an event',
      { status: 'pending', event: 'Order Completed' },
      (i) => status(i) === 'pending' && i % 3 === 0,
    ],
    [
      'delivered and a user',
      { status: 'delivered', userId: 'user-1' },
      (i) => status(i) === 'delivered' && i % 6 === 1,
    ],
    ['failed and a message id', { status: 'failed', messageId: 'm35' }, (i) => i === 35],
    ['pending and another status’s message id', { status: 'pending', messageId: 'm35' }, () => false],
  ])('finds status %s, newest first, through every page without gaps or repeats', async (_name, filter, keep) => {
    const want = expected(keep)
    expect(await everyPage(filter)).toEqual(want)
    const page = await store.listNewest({ ...filter, limit: 1000 })
    expect(page.map((d) => d.messageId)).toEqual(want)
    const wantedStatus = filter.status
    expect(page.every((d) => d.status === wantedStatus)).toBe(true)
  })

  it.each<[string, DeliveryFilter, (i: number) => boolean]>([
    ['every dead letter', {}, () => true],
    ['a source', { source: 'ios' }, (i) => i % 2 === 1],
    ['a time span', { since: T0 + 10_000, until: T0 + 50_000 }, (i) => i >= 10 && i <= 50],
    ['a route', { routes: [{ source: 'web', destination: 'Webhooks' }] }, (i) => i % 2 === 0],
    ['a user', { userId: 'user-3' }, (i) => i % 6 === 3],
    ['an event', { event: 'Page Viewed' }, (i) => i % 3 !== 0],
  ])('counts the dead letters of %s for a bulk replay', async (_name, filter, keep) => {
    const want = expected((i) => status(i) === 'failed' && keep(i)).length
    expect(want).toBeGreaterThan(0)
    expect(await store.retryMatching(filter, { dryRun: true })).toEqual({ matched: want })
    expect(await store.retryMatching({ ...filter, status: 'failed' }, { dryRun: true })).toEqual({ matched: want })
  })

  it.each<[string, DeliveryFilter, (i: number) => boolean]>([
    ['a window', { since: T0 + 20_000, until: T0 + 80_000 }, (i) => i >= 20 && i <= 80],
    [
      'a window and a status',
      { since: T0 + 20_000, until: T0 + 80_000, status: 'failed' },
      (i) => i >= 20 && i <= 80 && status(i) === 'failed',
    ],
    [
      'a window, a status and a user',
      { since: T0, until: T0 + 119_000, status: 'delivered', userId: 'user-4' },
      (i) => status(i) === 'delivered' && i % 6 === 4,
    ],
    ['a window before every message', { since: T0 - 10_000, until: T0 - 1 }, () => false],
  ])('counts the originals of %s for a replay', async (_name, filter, keep) => {
    expect(await store.replays.count(filter)).toBe(expected(keep).length)
  })

  // Last: it changes the dead letters and adds replay copies.
  it('replays a late window, queueing exactly its originals, and bulk-replays one source’s dead letters', async () => {
    const window = { since: T0 + 100_000, until: T0 + 110_000 }
    const replay = await store.replays.create({ filter: window, url: undefined, ratePerSecond: 1000 })
    expect(replay).toMatchObject({ matched: 11 })
    expect((await store.replays.queue()).queued).toBe(11)
    expect(await store.replays.get(replay.id)).toMatchObject({ state: 'done', matched: 11, queued: 11 })
    const copies = (await store.listNewest({ limit: 1000 })).filter((d) => d.replayOf !== undefined)
    expect(copies.map((d) => d.messageId)).toEqual(expected((i) => i >= 100 && i <= 110))

    const ios = expected((i) => status(i) === 'failed' && i % 2 === 1)
    expect(await store.retryMatching({ source: 'ios' })).toEqual({ matched: ios.length, retried: ios.length })
    const failed = (await store.listNewest({ status: 'failed', limit: 1000 })).map((d) => d.messageId)
    expect(failed).toEqual(expected((i) => status(i) === 'failed' && i % 2 === 0))
    const pending = await store.listNewest({ status: 'pending', source: 'ios', limit: 1000 })
    expect(pending.filter((d) => d.replayOf === undefined).map((d) => d.messageId)).toEqual(
      expected((i) => i % 2 === 1 && (status(i) === 'pending' || status(i) === 'failed')),
    )
  })
})
