import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { DeliveryStatus, NewDelivery, Store } from '../../../src/relay/store/store'
import { openTestStore, STORE_KINDS } from '../../support/stores'

// The delivery log newest first (Store.listNewest), as the operator page pages through it.
describe.each(STORE_KINDS)('listNewest on the %s store', (kind) => {
  let store: Store

  beforeAll(async () => {
    store = await openTestStore(kind)
    const deliveries: NewDelivery[] = Array.from({ length: 700 }, (_, i) => ({
      source: i % 5 === 0 ? 'ios' : 'web',
      destination: 'Webhooks',
      messageId: `m${i}`,
      type: 'track',
      json: JSON.stringify({ type: 'track', userId: 'u', event: `E${i}`, messageId: `m${i}` }),
    }))
    await store.enqueue(deliveries)
    // The n-th message's delivery id (a store numbers them as it will: PostgreSQL in blocks per source).
    const idOf = new Map((await store.list({ after: 0, limit: 10_000 })).map((d) => [d.messageId, d.id]))
    // Every third delivered, every seventh dead-lettered, the rest pending; then the oldest
    // delivered ones pruned, leaving gaps in the ids.
    await store.record(
      Array.from({ length: 700 }, (_, i) => i + 1)
        .filter((n) => n % 3 === 0 || n % 7 === 0)
        .map((n) => ({
          id: idOf.get(`m${n - 1}`)!,
          at: 0,
          requests: [{ url: 'https://hooks.example/in', status: n % 3 === 0 ? 200 : 404, ms: 5 }],
          next: n % 3 === 0 ? { status: 'delivered' as const } : { status: 'failed' as const, error: 'HTTP 404' },
        })),
    )
    await store.prune(Date.now() + 60_000, 10)
  })
  afterAll(async () => {
    await store.close()
  })

  async function everyMatch(status?: DeliveryStatus, source?: string): Promise<number[]> {
    return (await store.list({ status, source, after: 0, limit: 10_000 })).map((d) => d.id).reverse()
  }

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
        const page = await store.listNewest({ status, source, before, limit })
        seen.push(...page.map((d) => d.id))
        if (page.length < limit) break
        before = page.at(-1)!.id
      }
      expect(seen).toEqual(expected)
    },
  )

  it('shows each delivery as the oldest-first log does, attempts and all', async () => {
    const [newest] = await store.listNewest({ status: 'delivered', limit: 1 })
    expect(newest!.attempts).toMatchObject([{ url: 'https://hooks.example/in', status: 200 }])
    const [same] = await store.list({ after: newest!.id - 1, limit: 1 })
    expect(newest).toEqual(same)
    expect(await store.get(newest!.id)).toEqual(same)
  })

  it('finds nothing in an empty store', async () => {
    const empty = await openTestStore(kind)
    try {
      expect(await empty.listNewest({ limit: 20 })).toEqual([])
    } finally {
      await empty.close()
    }
  })
})
