import { describe, expect, it } from 'vitest'
import { freshPostgresDatabase, sql } from '../../support/postgres'
import { openTestStore } from '../../support/stores'

// A PostgreSQL database with a publication on it (logical replication, change data capture, a
// blue/green upgrade): PostgreSQL refuses every UPDATE and DELETE on a published table that has
// no replica identity, so each table the relay deletes from or rewrites needs one. Retention must
// still delete old deliveries with their requests, and the relay must still start again.
const T0 = Date.parse('2026-01-01T00:00:00.000Z')

describe('a PostgreSQL database with a publication for all tables', () => {
  it('prunes delivered deliveries and their attempts, and opens again', async () => {
    const url = await freshPostgresDatabase()
    await sql(url, 'CREATE PUBLICATION everything FOR ALL TABLES')
    let now = T0
    let store = await openTestStore('postgres', () => now, url)
    try {
      await store.enqueue(
        ['m1', 'm2', 'm3'].map((messageId) => ({
          source: 'web',
          destination: 'Webhooks',
          messageId,
          type: 'track',
          json: JSON.stringify({ type: 'track', event: 'E', messageId }),
        })),
      )
      const due = await store.claim({ source: 'web', limit: 10, owner: 'relay-a', leaseMs: 30_000 })
      await store.record(
        due.map((d, i) => ({
          id: d.id,
          at: now,
          requests: [{ url: 'https://hooks.example/', status: i === 0 ? 410 : 200, ms: 3 }],
          next: i === 0 ? { status: 'failed' as const, error: 'HTTP 410' } : { status: 'delivered' as const },
        })),
      )

      now = T0 + 60_000
      expect(await store.prune(now, 100)).toBe(2)
      const left = await store.listNewest({ limit: 10 })
      expect(left.map((d) => [d.messageId, d.status, d.attempts.map((a) => a.status)])).toEqual([
        ['m1', 'failed', [410]],
      ])
      expect(await sql(url, 'SELECT count(*)::int AS n FROM attempts')).toEqual([{ n: 1 }])

      // Starting again rewrites the schema's version row.
      await store.close()
      store = await openTestStore('postgres', () => now, url)
      expect((await store.listNewest({ limit: 10 })).map((d) => d.messageId)).toEqual(['m1'])
    } finally {
      await store.close()
    }
  })
})
