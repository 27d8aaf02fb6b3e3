import { afterEach, describe, expect, it } from 'vitest'
import type { NewDelivery, Store } from '../../../src/relay/store/store'
import { openTestStore, STORE_KINDS, type StoreKind } from '../../support/stores'

// A commit of many deliveries (a group commit gathers several requests' batches): SQLite writes
// them several rows to a statement, so every row of every statement, the rest after the last
// full one, and duplicates within and across statements must come out as one row each.
const T0 = Date.parse('2026-01-01T00:00:00.000Z')

const opened: Store[] = []
afterEach(async () => {
  for (const store of opened.splice(0)) await store.close()
})

function delivery(i: number, destination = 'Webhooks'): NewDelivery {
  const messageId = `m-${i}`
  return {
    source: 'web',
    destination,
    messageId,
    type: 'track',
    json: JSON.stringify({ type: 'track', userId: `user-${i % 7}`, event: `E${i}`, messageId }),
  }
}

describe.each(STORE_KINDS)('enqueueing a large commit on the %s store', (kind: StoreKind) => {
  async function open(): Promise<Store> {
    const store = await openTestStore(kind, () => T0)
    opened.push(store)
    return store
  }

  it('stores every delivery of a commit that is not a whole number of statements, each as given', async () => {
    const store = await open()
    const deliveries = Array.from({ length: 163 }, (_, i) => delivery(i, i % 2 === 0 ? 'Webhooks' : 'Other'))
    expect(await store.enqueue(deliveries)).toBe(163)
    const stored = await store.list({ after: 0, limit: 1000 })
    expect(stored.map((d) => [d.messageId, d.destination, d.status, d.message])).toEqual(
      deliveries.map((d) => [d.messageId, d.destination, 'pending', JSON.parse(d.json)]),
    )
    expect(new Set(stored.map((d) => d.createdAt))).toEqual(new Set([new Date(T0).toISOString()]))
    // The search keys of a row far into the commit are its own.
    const page = await store.find({ userId: 'user-3', limit: 50 })
    expect(page.deliveries.map((d) => d.messageId).sort()).toEqual(
      deliveries
        .map((_, i) => i)
        .filter((i) => i % 7 === 3)
        .map((i) => `m-${i}`)
        .sort(),
    )
  })

  it('counts and keeps one delivery per message and route, duplicates in one commit or sent again', async () => {
    const store = await open()
    expect(await store.enqueue(Array.from({ length: 30 }, (_, i) => delivery(i)))).toBe(30)
    // Sent again with new ones, and some twice in the same commit: a new one twice side by side
    // (inside SQLite's first multi-row statement) and a third time in the next, others in the rest.
    const again = [
      delivery(30),
      delivery(30),
      ...Array.from({ length: 60 }, (_, i) => delivery(i)),
      delivery(45),
      delivery(59),
      delivery(59, 'Other'),
    ]
    expect(await store.enqueue(again)).toBe(31)
    const stored = await store.list({ after: 0, limit: 1000 })
    expect(stored).toHaveLength(61)
    expect(stored.filter((d) => d.messageId === 'm-30')).toHaveLength(1)
    expect(stored.filter((d) => d.messageId === 'm-59').map((d) => d.destination)).toEqual(['Webhooks', 'Other'])
  })
})
