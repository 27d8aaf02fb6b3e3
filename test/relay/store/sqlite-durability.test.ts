import { describe, expect, it, vi } from 'vitest'
import { SYNC_FULL, SYNC_NORMAL } from '../../../src/relay/store/sqlite/statements'
import { openSqliteStoreWithDb } from '../fixtures/store'

// What waits for the disk on SQLite: an acknowledged message's commit always does (here, in memory
// with no WAL file, synchronous = FULL; on a file, the WAL's flush after it: sqlite-wal-sync.test.ts);
// a claim's and an outcome's do not (NORMAL), since a power cut losing them only leaves deliveries
// to be sent again. Each write that skips the wait puts FULL back after it.
const T0 = Date.parse('2026-01-01T00:00:00.000Z')
const FULL = 2

describe('the SQLite store waits for the disk', () => {
  it('for enqueued messages, and not for claims and outcomes, which leave it FULL for the next enqueue', async () => {
    const { store, db } = await openSqliteStoreWithDb(':memory:', () => T0)
    try {
      // The store sets it with statements prepared once: every statement's run is watched.
      const statement = Object.getPrototypeOf(db.prepare('SELECT 1')) as { run: () => unknown }
      const settings = vi.spyOn(statement, 'run')
      const syncSettings = () =>
        settings.mock.contexts
          .map((context) => (context as { source: string }).source)
          .filter((text) => text.startsWith('PRAGMA synchronous'))

      await store.enqueue([
        { source: 'web', destination: 'Webhooks', messageId: 'm1', type: 'track', json: '{"messageId":"m1"}' },
      ])
      expect(syncSettings()).toEqual([])

      const [claimed] = await store.claim({ source: 'web', limit: 10, owner: 'w1', leaseMs: 30_000 })
      expect(claimed?.id).toBeDefined()
      expect(syncSettings()).toEqual([SYNC_NORMAL, SYNC_FULL])

      await store.record([
        {
          id: claimed!.id,
          at: T0,
          requests: [{ url: 'https://a.example/hook', status: 200, ms: 3 }],
          next: { status: 'delivered' },
        },
      ])
      expect(syncSettings()).toEqual([SYNC_NORMAL, SYNC_FULL, SYNC_NORMAL, SYNC_FULL])
      settings.mockRestore()
      expect(db.pragma('synchronous', { simple: true })).toBe(FULL)
    } finally {
      await store.close()
    }
  })

  it('for the next enqueue after a claim and an outcome that failed', async () => {
    let now = T0
    const { store, db } = await openSqliteStoreWithDb(':memory:', () => now)
    try {
      await store.enqueue([
        { source: 'web', destination: 'Webhooks', messageId: 'm1', type: 'track', json: '{"messageId":"m1"}' },
      ])
      const [claimed] = await store.claim({ source: 'web', limit: 10, owner: 'w1', leaseMs: 30_000 })

      // A request without a URL breaks the attempts' NOT NULL: the outcome is refused whole.
      const request = { url: null as unknown as string, status: 200, ms: 3 }
      await expect(
        store.record([{ id: claimed!.id, at: T0, requests: [request], next: { status: 'delivered' } }]),
      ).rejects.toThrow(/NOT NULL/)
      expect(db.pragma('synchronous', { simple: true })).toBe(FULL)

      // A claim the database refuses, once the first lease ran out (a trigger stands in for any failed write).
      now = T0 + 60_000
      db.exec(
        "CREATE TRIGGER refuse_claims BEFORE UPDATE OF lease_until ON deliveries BEGIN SELECT RAISE(ABORT, 'refused'); END",
      )
      await expect(store.claim({ source: 'web', limit: 10, owner: 'w2', leaseMs: 30_000 })).rejects.toThrow(/refused/)
      expect(db.pragma('synchronous', { simple: true })).toBe(FULL)
    } finally {
      await store.close()
    }
  })
})
