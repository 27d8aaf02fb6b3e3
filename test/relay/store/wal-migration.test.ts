import { describe, expect, it } from 'vitest'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { MIGRATIONS } from '../../../src/relay/store/postgres/schema'
import { MIGRATIONS as SQLITE_MIGRATIONS } from '../../../src/relay/store/sqlite/schema'
import { freshPostgresDatabase, sql } from '../../support/postgres'
import type { Store } from '../../../src/relay/store/store'
import { openTestStore } from '../../support/stores'

const M1 = `INSERT INTO deliveries (source, destination, message_id, type, message, status, next_attempt_at, created_at, updated_at)
  VALUES ('web', 'Webhooks', 'm1', 'track', '{"messageId":"m1"}', 'pending', 1, 1, 1)`

// After the upgrade, the one index left still skips m1 sent again, and finds it by message id.
async function expectDeduplicatedAndFound(store: Store): Promise<void> {
  const again = { source: 'web', destination: 'Webhooks', messageId: 'm1', type: 'track', json: '{"messageId":"m1"}' }
  expect(await store.enqueue([again, { ...again, messageId: 'm2', json: '{"messageId":"m2"}' }])).toBe(1)
  expect((await store.listNewest({ messageId: 'm1', limit: 10 })).map((d) => d.status)).toEqual(['pending'])
}

// A PostgreSQL database written before the WAL diet (schema 3) is brought up to date in place:
// its deliveries keep being deduplicated and found by message id through the one index left for
// both, and new pages leave room for a claim to stay on its page.
describe('the WAL migration', () => {
  it('upgrades a PostgreSQL database of schema 3 in place', async () => {
    const url = await freshPostgresDatabase()
    for (const text of MIGRATIONS.slice(0, 3)) await sql(url, text)
    await sql(url, 'CREATE TABLE tracklet_schema (version integer NOT NULL)')
    await sql(url, 'INSERT INTO tracklet_schema (version) VALUES (3)')
    await sql(url, M1)
    const store = await openTestStore('postgres', Date.now, url)
    try {
      await expectDeduplicatedAndFound(store)
      // Schema 6 (docs/postgres.md): one index on the messages serves both, on every partition.
      const indexes = await sql<{ indexname: string }>(
        url,
        "SELECT indexname FROM pg_indexes WHERE tablename IN ('messages', 'messages_kept')",
      )
      expect(indexes.map((i) => i.indexname)).toContain('messages_key')
    } finally {
      await store.close()
    }
  })

  it('upgrades a SQLite file of schema 4 in place: one unique index serves duplicates and message-id search', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tracklet-index-migration-'))
    const path = join(dir, 'old.db')
    const db = new Database(path)
    for (const text of SQLITE_MIGRATIONS.slice(0, 4)) db.exec(text)
    db.pragma('user_version = 4')
    db.exec(M1)
    db.close()
    const store = await openTestStore('sqlite', Date.now, path)
    try {
      await expectDeduplicatedAndFound(store)
    } finally {
      await store.close()
    }
    const upgraded = new Database(path, { readonly: true })
    const indexes = upgraded
      .prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'deliveries'")
      .pluck()
      .all()
    const plan = upgraded.prepare("EXPLAIN QUERY PLAN SELECT id FROM deliveries WHERE message_id = 'm1'").all() as {
      detail: string
    }[]
    upgraded.close()
    rmSync(dir, { recursive: true, force: true })
    expect(indexes).toContain('deliveries_message_route')
    expect(indexes).not.toContain('deliveries_message_id')
    expect(indexes).not.toContain('deliveries_message')
    expect(plan.map((step) => step.detail).join(' ')).toContain('deliveries_message_route')
  })
})
