import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { DeliveryFilter, NewDelivery, Store } from '../../../src/relay/store/store'
import { openTestStore, STORE_KINDS } from '../../support/stores'

// Finding deliveries (Store.find, listNewest) and replaying dead letters in bulk
// (Store.retryMatching), as the operator's console does: on both stores.
const T0 = Date.parse('2026-01-01T00:00:00.000Z')
const ROUTE_A = { source: 'web', destination: 'Webhooks' }

function message(i: number): NewDelivery {
  const source = i % 2 === 0 ? 'web' : 'ios'
  const json = {
    type: i % 5 === 0 ? 'identify' : 'track',
    messageId: `m${i}`,
    userId: `user-${i % 10}`,
    ...(i % 5 === 0 ? {} : { event: i % 3 === 0 ? 'Order Completed' : 'Page Viewed' }),
  }
  return { source, destination: 'Webhooks', messageId: json.messageId, type: json.type, json: JSON.stringify(json) }
}

describe.each(STORE_KINDS)('finding deliveries (%s)', (kind) => {
  let store: Store
  let clock = T0

  beforeAll(async () => {
    store = await openTestStore(kind, () => clock)
    // 300 messages, one a second; every fourth one dead-lettered.
    for (let i = 0; i < 300; i++) {
      clock = T0 + i * 1000
      await store.enqueue([message(i)])
    }
    const ids = (await store.list({ after: 0, limit: 1000 })).filter((d) => Number(d.messageId.slice(1)) % 4 === 0)
    await store.record(
      ids.map((d) => ({
        id: d.id,
        at: clock,
        requests: [{ url: 'https://hooks.example/in', status: 500, ms: 3 }],
        next: { status: 'failed' as const, error: 'HTTP 500' },
      })),
    )
  })
  afterAll(async () => {
    await store.close()
  })

  // Every match, newest first, read a page at a time through the cursor.
  async function everyPage(filter: DeliveryFilter, limit: number): Promise<string[]> {
    const seen: string[] = []
    let cursor: string | undefined
    do {
      const page = await store.find({ ...filter, cursor, limit })
      expect(page.deliveries.length).toBeLessThanOrEqual(limit)
      seen.push(...page.deliveries.map((d) => d.messageId))
      cursor = page.next
    } while (cursor !== undefined)
    return seen
  }

  // What the filter should match, computed from the messages themselves.
  function expected(keep: (i: number) => boolean): string[] {
    return Array.from({ length: 300 }, (_, i) => 299 - i)
      .filter(keep)
      .map((i) => `m${i}`)
  }

  it.each<[string, DeliveryFilter, (i: number) => boolean]>([
    ['messageId', { messageId: 'm42' }, (i) => i === 42],
    ['userId', { userId: 'user-7' }, (i) => i % 10 === 7],
    ['event', { event: 'Order Completed' }, (i) => i % 5 !== 0 && i % 3 === 0],
    ['type', { type: 'identify' }, (i) => i % 5 === 0],
    ['status and source', { status: 'failed', source: 'web' }, (i) => i % 4 === 0],
    ['since and until (inclusive)', { since: T0 + 100_000, until: T0 + 120_000 }, (i) => i >= 100 && i <= 120],
    ['routes (a webhook URL)', { routes: [ROUTE_A] }, (i) => i % 2 === 0],
    ['no route at all', { routes: [] }, () => false],
    ['userId and event', { userId: 'user-3', event: 'Order Completed' }, (i) => i % 10 === 3 && i % 3 === 0],
  ])('by %s, newest first, through every page without gaps or repeats', async (_name, filter, keep) => {
    const want = expected(keep)
    expect(await everyPage(filter, 7)).toEqual(want)
    expect((await store.listNewest({ ...filter, limit: 1000 })).map((d) => d.messageId)).toEqual(want)
  })

  it('says there is no next page when the last one is full', async () => {
    const page = await store.find({ userId: 'user-1', limit: 30 })
    expect(page.deliveries).toHaveLength(30)
    expect(page.next).toBeUndefined()
  })

  it('refuses a cursor it did not give, naming it', async () => {
    await expect(store.find({ cursor: 'garbage', limit: 5 })).rejects.toThrow(/cursor must be the "next" of a page/)
    await expect(store.find({ cursor: 'd1.LTE', limit: 5 })).rejects.toThrow(TypeError)
  })
})

describe.each(STORE_KINDS)('replaying dead letters in bulk (%s)', (kind) => {
  let store: Store
  const clock = T0

  beforeAll(async () => {
    store = await openTestStore(kind, () => clock)
  })
  afterAll(async () => {
    await store.close()
  })

  async function deadLetters(count: number, from: number, userId: string): Promise<void> {
    const deliveries = Array.from({ length: count }, (_, i) => ({
      source: 'web',
      destination: 'Webhooks',
      messageId: `${userId}-${from + i}`,
      type: 'track',
      json: JSON.stringify({ type: 'track', userId, event: 'E', messageId: `${userId}-${from + i}` }),
    }))
    await store.enqueue(deliveries)
    const claimed = await store.claim({ source: 'web', limit: count, owner: 'r', leaseMs: 1 })
    await store.record(
      claimed.map((d) => ({ id: d.id, at: clock, requests: [], next: { status: 'failed' as const, error: 'gone' } })),
    )
  }

  it('counts first on a dry run, then queues every dead letter the filter matches, over many chunks', async () => {
    // 2,345 dead letters of one user (more than two chunks of 1,000), 10 of another, 5 pending.
    await deadLetters(2345, 0, 'alice')
    await deadLetters(10, 0, 'bob')
    await store.enqueue([
      { source: 'web', destination: 'Webhooks', messageId: 'p', type: 'track', json: '{"userId":"alice"}' },
    ])

    expect(await store.retryMatching({ userId: 'alice' }, { dryRun: true })).toEqual({ matched: 2345 })
    // A dry run changes nothing.
    expect((await store.backlog()).find((r) => r.status === 'failed')?.count).toBe(2355)
    expect(await store.retryMatching({ status: 'pending', userId: 'alice' }, { dryRun: true })).toEqual({ matched: 0 })

    expect(await store.retryMatching({ userId: 'alice' })).toEqual({ matched: 2345, retried: 2345 })
    const backlog = await store.backlog()
    expect(backlog.find((r) => r.status === 'failed')?.count).toBe(10)
    expect(backlog.find((r) => r.status === 'pending')?.count).toBe(2346)
    // Nothing left to replay for alice; bob's untouched until asked for.
    expect(await store.retryMatching({ userId: 'alice' })).toEqual({ matched: 0, retried: 0 })
    const [retried] = await store.listNewest({ userId: 'alice', status: 'pending', limit: 1 })
    expect(retried).toMatchObject({ status: 'pending', nextAttemptAt: new Date(clock).toISOString() })
    expect(await store.retryMatching({ status: 'failed' })).toEqual({ matched: 10, retried: 10 })
  })
})
