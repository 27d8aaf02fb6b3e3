import { describe, expect, it } from 'vitest'
import { MESSAGE_KEY_HASH, POSTGRES_MESSAGE_KEY_HASH_STEP } from '../../../src/relay/store/postgres/message-key-hash'
import { DAY_MS, makeDaysAhead } from '../../../src/relay/store/postgres/partitions'
import { openPool } from '../../../src/relay/kit/postgres/pool'
import { PostgresStore } from '../../../src/relay/store/postgres/postgres-store'
import { prepareMessageKey } from '../../../src/relay/store/postgres/prepare-message-key'
import { MIGRATIONS, migrate } from '../../../src/relay/store/postgres/schema'
import { freshPostgresDatabase, sql } from '../../support/postgres'
import { testDelivery } from '../fixtures/deliveries'

// The messages' key as a hash index (docs/postgres.md, "The duplicate check at 30 days"): built
// beside the B-tree without blocking writers, then swapped in by its schema step; duplicates are
// still skipped in every partition and message ids still found.
const DAY0 = Date.parse('2026-03-01T10:00:00.000Z')

// The access method of each partition's index on the key, by partition.
async function keyIndexes(url: string): Promise<Record<string, string>> {
  const rows = await sql<{ partition: string; am: string }>(
    url,
    `SELECT x.indrelid::regclass::text AS partition, a.amname AS am
     FROM pg_index x JOIN pg_class c ON c.oid = x.indexrelid JOIN pg_am a ON a.oid = c.relam
     WHERE pg_get_indexdef(x.indexrelid) LIKE '%md5(message_id)%' AND x.indrelid <> 'messages'::regclass
     ORDER BY 1, 2`,
  )
  const found: Record<string, string> = {}
  for (const r of rows) found[r.partition] = found[r.partition] ? `${found[r.partition]},${r.am}` : r.am
  return found
}

describe('the messages’ key as a hash index on PostgreSQL', () => {
  it('is built ahead beside the B-tree, one partition at a time; the step swaps it in and drops the B-tree', async () => {
    const url = await freshPostgresDatabase()
    const before = MIGRATIONS.slice(0, MIGRATIONS.indexOf(POSTGRES_MESSAGE_KEY_HASH_STEP))
    const pool = await openPool(url)
    const clock = { now: DAY0 }
    const store = new PostgresStore(pool, { now: () => clock.now, databaseNow: () => clock.now })
    try {
      await migrate(pool, before)
      await makeDaysAhead(pool, DAY0)
      expect(await store.enqueue([testDelivery('m1'), testDelivery('m2')])).toBe(2)
      clock.now = DAY0 + DAY_MS
      expect(await store.enqueue([testDelivery('m3')])).toBe(1)

      // A start cut short: the parent made, one partition's build left invalid; a day made since.
      await sql(url, `CREATE INDEX ${MESSAGE_KEY_HASH} ON ONLY messages USING hash ((md5(message_id)::uuid))`)
      await sql(url, 'CREATE INDEX messages_kept_key_hash ON messages_kept USING hash ((md5(message_id)::uuid))')
      await sql(url, "UPDATE pg_index SET indisvalid = false WHERE indexrelid = 'messages_kept_key_hash'::regclass")
      const cut = await sql<{ oid: number }>(url, "SELECT 'messages_kept_key_hash'::regclass::oid::int AS oid")
      await makeDaysAhead(pool, DAY0 + 5 * DAY_MS)
      await prepareMessageKey(pool)
      const days = await keyIndexes(url)
      expect(Object.keys(days)).toContain('messages_kept')
      expect(Object.keys(days)).toContain('messages_2026_03_08')
      expect(Object.values(days).every((am) => am === 'btree,hash')).toBe(true)
      const kept = await sql<{ oid: number; valid: boolean }>(
        url,
        `SELECT x.indexrelid::int AS oid, x.indisvalid AS valid FROM pg_inherits i JOIN pg_index x ON x.indexrelid = i.inhrelid
         WHERE i.inhparent = '${MESSAGE_KEY_HASH}'::regclass AND x.indrelid = 'messages_kept'::regclass`,
      )
      expect(kept).toEqual([{ oid: expect.any(Number), valid: true }])
      expect(kept[0]!.oid).not.toBe(cut[0]!.oid)
      const hash = await sql<{ oid: number; valid: boolean }>(
        url,
        `SELECT indexrelid::int AS oid, indisvalid AS valid FROM pg_index WHERE indexrelid = '${MESSAGE_KEY_HASH}'::regclass`,
      )
      expect(hash.map((h) => h.valid)).toEqual([true])

      await migrate(pool)
      const after = await keyIndexes(url)
      expect(Object.keys(after)).toEqual(Object.keys(days))
      expect(Object.values(after).every((am) => am === 'hash')).toBe(true)
      const renamed = await sql<{ oid: number }>(url, "SELECT 'messages_key'::regclass::oid::int AS oid")
      expect(renamed[0]!.oid).toBe(hash[0]!.oid)
      // Upgraded already: nothing more to prepare.
      await prepareMessageKey(pool)

      // Written again a day later, the first day's messages are skipped; a new one is not.
      clock.now = DAY0 + 2 * DAY_MS
      expect(await store.enqueue([testDelivery('m1'), testDelivery('m3'), testDelivery('m4')])).toBe(1)
      expect((await store.listNewest({ messageId: 'm2', limit: 10 })).map((d) => d.messageId)).toEqual(['m2'])
      const plan = await sql<{ 'QUERY PLAN': string }>(
        url,
        "EXPLAIN SELECT id FROM messages WHERE md5(message_id)::uuid = md5('m1')::uuid",
      )
      expect(plan.map((p) => p['QUERY PLAN']).join('\n')).toMatch(/Index Scan/)
    } finally {
      await store.close()
    }
  })

  it('is made by the step itself on a fresh database', async () => {
    const url = await freshPostgresDatabase()
    const pool = await openPool(url)
    try {
      await prepareMessageKey(pool)
      await migrate(pool)
      await makeDaysAhead(pool, DAY0)
      expect(Object.values(await keyIndexes(url))).toEqual(['hash', 'hash', 'hash', 'hash'])
    } finally {
      await pool.end()
    }
  })
})
