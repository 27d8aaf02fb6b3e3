import { describe, expect, it, vi } from 'vitest'
import { openSqliteStoreWithDb } from '../fixtures/store'

// What waits for the disk on SQLite: an acknowledged message's commit always does (synchronous =
// FULL); a claim's and an outcome's do not (NORMAL), since a power cut losing them only leaves
// deliveries to be sent again. Each write that skips the wait puts FULL back after it.
const T0 = Date.parse('2026-01-01T00:00:00.000Z')
const FULL = 2

describe('the SQLite store waits for the disk', () => {
  it('for enqueued messages, and not for claims and outcomes, which leave it FULL for the next enqueue', async () => {
    const { store, db } = await openSqliteStoreWithDb(':memory:', () => T0)
    try {
      const settings = vi.spyOn(db, 'pragma')
      const syncSettings = () =>
        settings.mock.calls.map(([text]) => text).filter((text) => text.startsWith('synchronous'))

      await store.enqueue([
        { source: 'web', destination: 'Webhooks', messageId: 'm1', type: 'track', json: '{"messageId":"m1"}' },
      ])
      expect(syncSettings()).toEqual([])

      const [claimed] = await store.claim({ source: 'web', limit: 10, owner: 'w1', leaseMs: 30_000 })
      expect(claimed?.id).toBeDefined()
      expect(syncSettings()).toEqual(['synchronous = NORMAL', 'synchronous = FULL'])

      await store.record([
        {
          id: claimed!.id,
          at: T0,
          requests: [{ url: 'https://a.example/hook', status: 200, ms: 3 }],
          next: { status: 'delivered' },
        },
      ])
      expect(syncSettings()).toEqual([
        'synchronous = NORMAL',
        'synchronous = FULL',
        'synchronous = NORMAL',
        'synchronous = FULL',
      ])
      settings.mockRestore()
      expect(db.pragma('synchronous', { simple: true })).toBe(FULL)
    } finally {
      await store.close()
    }
  })
})
