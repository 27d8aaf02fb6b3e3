import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { newestDeliveries } from '../../../src/relay/ops/page/newest'
import { openSqliteStore, type SqliteStore } from '../../../src/relay/store/sqlite/sqlite-store'
import type { DeliveryStatus, NewDelivery } from '../../../src/relay/store/store'

let store: SqliteStore

beforeAll(async () => {
  store = await openSqliteStore(':memory:')
  const deliveries: NewDelivery[] = Array.from({ length: 700 }, (_, i) => ({
    source: i % 5 === 0 ? 'ios' : 'web',
    destination: 'Webhooks',
    messageId: `m${i}`,
    type: 'track',
    json: JSON.stringify({ type: 'track', userId: 'u', event: `E${i}`, messageId: `m${i}` }),
  }))
  await store.enqueue(deliveries)
  // Every third delivered, every seventh dead-lettered, the rest pending; then the oldest
  // delivered ones pruned, leaving gaps in the ids.
  await store.record(
    Array.from({ length: 700 }, (_, i) => i + 1)
      .filter((id) => id % 3 === 0 || id % 7 === 0)
      .map((id) => ({
        id,
        at: 0,
        requests: [],
        next: id % 3 === 0 ? { status: 'delivered' as const } : { status: 'failed' as const, error: 'HTTP 404' },
      })),
  )
  await store.prune(Date.now() + 60_000, 100)
})
afterAll(async () => {
  await store.close()
})

async function everyMatch(status?: DeliveryStatus, source?: string): Promise<number[]> {
  return (await store.list({ status, source, after: 0, limit: 10_000 })).map((d) => d.id).reverse()
}

describe('newestDeliveries', () => {
  it.each([
    [undefined, undefined, 20],
    ['failed', undefined, 20],
    ['delivered', 'ios', 20],
    ['pending', 'web', 20],
    // Pages larger than the store is read in at once.
    [undefined, undefined, 150],
  ] as const)(
    'pages through every %s delivery of %s, newest first, %d at a time, without gaps or repeats',
    async (status, source, limit) => {
      const expected = await everyMatch(status, source)
      expect(expected.length).toBeGreaterThan(limit)
      const seen: number[] = []
      let before: number | undefined
      for (;;) {
        const page = await newestDeliveries(store, { status, source, before, limit })
        seen.push(...page.map((d) => d.id))
        if (page.length < limit) break
        before = page.at(-1)!.id
      }
      expect(seen).toEqual(expected)
    },
  )

  it('finds nothing in an empty store', async () => {
    const empty = await openSqliteStore(':memory:')
    try {
      expect(await newestDeliveries(empty, { limit: 20 })).toEqual([])
    } finally {
      await empty.close()
    }
  })
})
