import { describe, expect, it } from 'vitest'
import { MIGRATIONS } from '../../../src/relay/store/postgres/schema'
import { freshPostgresDatabase, sql } from '../../support/postgres'
import { openTestStore } from '../../support/stores'

// A delivery of each status, each with the request of its last attempt, written by schema 4.
const ROWS = `
  INSERT INTO deliveries (source, destination, message_id, type, message, user_id, event, status, attempts,
    next_attempt_at, last_error, created_at, updated_at)
  VALUES
    ('web', 'Webhooks', 'm1', 'track', '{"messageId":"m1"}', 'ada', 'Signed Up', 'failed', 3, 1, 'HTTP 500', 1, 1),
    ('web', 'Webhooks', 'm2', 'track', '{"messageId":"m2"}', 'ada', 'Signed Up', 'delivered', 1, 2, NULL, 2, 2),
    ('web', 'Webhooks', 'm3', 'track', '{"messageId":"m3"}', 'ada', 'Signed Up', 'pending', 1, 3, 'HTTP 503', 3, 3);
  INSERT INTO attempts (delivery_id, at, url, status, error, ms, response_body)
  SELECT id, 1, 'https://hooks.example/', CASE status WHEN 'delivered' THEN 200 WHEN 'failed' THEN 500 ELSE 503 END,
    last_error, 12, CASE WHEN status = 'delivered' THEN NULL ELSE 'down' END
  FROM deliveries;`

// A PostgreSQL database written before the status index went (schema 4) is brought up to date in
// place: every delivery keeps its status and its requests, dead letters are still found and
// replayed through the index left for them alone, and new requests are recorded under the
// attempts' new primary key (delivery, then id).
describe('the status-index migration', () => {
  it('upgrades a PostgreSQL database of schema 4 in place, keeping every delivery and its attempts', async () => {
    const url = await freshPostgresDatabase()
    for (const text of MIGRATIONS.slice(0, 4)) await sql(url, text)
    await sql(url, 'CREATE TABLE tracklet_schema (version integer NOT NULL)')
    await sql(url, 'INSERT INTO tracklet_schema (version) VALUES (4)')
    await sql(url, ROWS)
    const store = await openTestStore('postgres', Date.now, url)
    try {
      const all = await store.listNewest({ limit: 10 })
      expect(all.map((d) => [d.messageId, d.status, d.attempts.map((a) => a.status)])).toEqual([
        ['m3', 'pending', [503]],
        ['m2', 'delivered', [200]],
        ['m1', 'failed', [500]],
      ])
      expect(all[2]?.attempts[0]).toMatchObject({
        url: 'https://hooks.example/',
        error: 'HTTP 500',
        responseBody: 'down',
      })

      expect((await store.find({ status: 'failed', limit: 10 })).deliveries.map((d) => d.messageId)).toEqual(['m1'])
      expect((await store.find({ status: 'pending', limit: 10 })).deliveries.map((d) => d.messageId)).toEqual(['m3'])
      expect(await store.retryMatching({ userId: 'ada' }, { dryRun: true })).toEqual({ matched: 1 })

      // The pending one is attempted again and delivered: its second request joins the first.
      const [due] = await store.claim({ source: 'web', limit: 10, owner: 'relay-a', leaseMs: 30_000 })
      expect(due?.id).toBe(all[0]?.id)
      await store.record([
        {
          id: due!.id,
          at: Date.now(),
          requests: [{ url: 'https://hooks.example/', status: 200, ms: 5 }],
          next: { status: 'delivered' },
        },
      ])
      const delivered = await store.get(due!.id)
      expect(delivered?.status).toBe('delivered')
      expect(delivered?.attempts.map((a) => a.status)).toEqual([503, 200])

      const indexes = await sql<{ indexname: string; indexdef: string }>(
        url,
        "SELECT indexname, indexdef FROM pg_indexes WHERE tablename IN ('queue', 'attempts')",
      )
      // Schema 6 (docs/postgres.md): dead letters are found through the queue's index for them alone.
      const names = indexes.map((i) => i.indexname)
      expect(names).toContain('queue_failed')
      // One index per request: the primary key, by delivery then id (then the day partition's key,
      // docs/postgres.md), in place of two.
      expect(
        indexes
          .filter((i) => i.indexname.startsWith('attempts_'))
          .map((i) => i.indexname)
          .sort(),
      ).toEqual(['attempts_pkey', 'attempts_url'])
      expect(indexes.find((i) => i.indexname === 'attempts_pkey')?.indexdef).toContain('(delivery_id, id, created_at)')
    } finally {
      await store.close()
    }
  })
})
