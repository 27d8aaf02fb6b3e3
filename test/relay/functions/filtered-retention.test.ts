import { afterEach, describe, expect, it } from 'vitest'
import type { AttemptOutcome, Store } from '../../../src/relay/store/store'
import { openTestStore, STORE_KINDS } from '../../support/stores'
import { T0, testDelivery } from '../fixtures/deliveries'

const opened: Store[] = []
afterEach(async () => {
  for (const store of opened.splice(0)) await store.close()
})

function settled(id: number, next: AttemptOutcome['next'], at: number): AttemptOutcome {
  return { id, at, requests: [{ url: '', ms: 1, console: ['a line'] }], next }
}

// Retention prunes deliveries a function dropped (filtered) as it prunes delivered ones (docs/functions.md).
describe.each(STORE_KINDS)('retention of filtered deliveries (%s)', (kind) => {
  it('prunes filtered deliveries older than the cut-off with their attempts, as delivered ones, keeping dead letters', async () => {
    let now = T0
    const store = await openTestStore(kind, () => now)
    opened.push(store)
    await store.enqueue(['filtered-old', 'delivered-old', 'failed-old', 'filtered-new'].map((id) => testDelivery(id)))
    const due = await store.claim({ source: 'web', limit: 10, owner: 'relay-a', leaseMs: 30_000 })
    const byId = new Map(due.map((d) => [d.message.messageId, d.id]))
    await store.record([
      settled(byId.get('filtered-old')!, { status: 'filtered', error: 'dropped by function' }, T0),
      settled(byId.get('delivered-old')!, { status: 'delivered' }, T0),
      settled(byId.get('failed-old')!, { status: 'failed', error: 'the function failed: no' }, T0),
    ])
    now = T0 + 5_000
    await store.record([settled(byId.get('filtered-new')!, { status: 'filtered', error: 'dropped by function' }, now)])

    expect(await store.prune(T0 + 1, 100)).toBe(2)
    const log = await store.list({ after: 0, limit: 10 })
    expect(log.map((d) => [d.messageId, d.status])).toEqual([
      ['failed-old', 'failed'],
      ['filtered-new', 'filtered'],
    ])
    expect(log[1]!.attempts).toEqual([expect.objectContaining({ url: '', console: ['a line'] })])
  })
})
