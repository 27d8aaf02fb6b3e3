import { describe, expect, it } from 'vitest'
import { MIGRATIONS } from '../../../src/relay/store/postgres/schema'
import { freshPostgresDatabase, sql } from '../../support/postgres'
import { openTestStore } from '../../support/stores'

// A PostgreSQL database written before the WAL diet (schema 3) is brought up to date in place:
// its deliveries keep being deduplicated and found by message id through the one index left for
// both, and new pages leave room for a claim to stay on its page.
describe('the WAL migration', () => {
  it('upgrades a PostgreSQL database of schema 3 in place', async () => {
    const url = await freshPostgresDatabase()
    for (const text of MIGRATIONS.slice(0, 3)) await sql(url, text)
    await sql(url, 'CREATE TABLE tracklet_schema (version integer NOT NULL)')
    await sql(url, 'INSERT INTO tracklet_schema (version) VALUES (3)')
    await sql(
      url,
      `INSERT INTO deliveries (source, destination, message_id, type, message, status, next_attempt_at, created_at, updated_at)
       VALUES ('web', 'Webhooks', 'm1', 'track', '{"messageId":"m1"}', 'pending', 1, 1, 1)`,
    )
    const store = await openTestStore('postgres', Date.now, url)
    try {
      const again = {
        source: 'web',
        destination: 'Webhooks',
        messageId: 'm1',
        type: 'track',
        json: '{"messageId":"m1"}',
      }
      expect(await store.enqueue([again, { ...again, messageId: 'm2', json: '{"messageId":"m2"}' }])).toBe(1)
      expect((await store.listNewest({ messageId: 'm1', limit: 10 })).map((d) => d.status)).toEqual(['pending'])
      const indexes = await sql<{ indexname: string }>(
        url,
        "SELECT indexname FROM pg_indexes WHERE tablename = 'deliveries'",
      )
      expect(indexes.map((i) => i.indexname)).not.toContain('deliveries_message_id')
      const [table] = await sql<{ reloptions: string[] }>(
        url,
        "SELECT reloptions FROM pg_class WHERE relname = 'deliveries'",
      )
      expect(table?.reloptions).toContain('fillfactor=50')
    } finally {
      await store.close()
    }
  })
})
