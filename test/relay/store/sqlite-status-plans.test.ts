import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openSqliteDatabase, type SqliteDatabase } from '../../../src/relay/store/sqlite/schema'
import { SQLITE_STATEMENTS as SQL } from '../../../src/relay/store/sqlite/statements'
import { SqliteStore } from '../../../src/relay/store/sqlite/sqlite-store'

// SQLite keeps no index over every delivery's status (each would cost every message ingested an
// entry: docs/postgres.md): dead letters have their own partial index, pending deliveries are read
// through the claim's, delivered ones by id. The statements that pick by status must still read an
// index, not the table: on a real outbox almost every row is delivered history.
const DELIVERED = 20_000

// The steps of a statement's plan.
function plan(db: SqliteDatabase, text: string, ...params: unknown[]): string[] {
  return (db.prepare(`EXPLAIN QUERY PLAN ${text}`).all(...params) as { detail: string }[]).map((s) => s.detail)
}

// The steps of a plan that read the whole deliveries table.
function tableScans(db: SqliteDatabase, text: string, ...params: unknown[]): string[] {
  return plan(db, text, ...params).filter((d) => /^SCAN deliveries\b(?! USING)/.test(d))
}

describe('the SQLite statements that select by status', () => {
  let db: SqliteDatabase
  let store: SqliteStore

  beforeAll(async () => {
    db = await openSqliteDatabase(':memory:')
    db.prepare(
      `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
       INSERT INTO deliveries (source, destination, message_id, type, message, user_id, event, status,
         attempts, next_attempt_at, created_at, updated_at)
       SELECT CASE WHEN i % 2 = 0 THEN 'web' ELSE 'ios' END, 'Webhooks', 'm' || i, 'track', '{"type":"track"}',
         'user-' || (i % 500), 'E',
         CASE WHEN i % 1000 = 1 THEN 'failed' WHEN i % 1000 = 2 THEN 'pending' ELSE 'delivered' END,
         1, i, i, i
       FROM n`,
    ).run(DELIVERED)
    store = new SqliteStore(db)
  })
  afterAll(async () => {
    await store?.close()
  })

  it('keeps no status index over every delivery, only one over dead letters', () => {
    const names = db
      .prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'deliveries'")
      .pluck()
      .all()
    expect(names).not.toContain('deliveries_status')
    expect(names).toContain('deliveries_failed')
  })

  it('counts the backlog from the pending and dead-letter indexes, and counts it right', async () => {
    expect(tableScans(db, SQL.backlog)).toEqual([])
    const rows = await store.backlog()
    expect(rows.map((r) => [r.source, r.status, r.count])).toEqual([
      ['ios', 'failed', 20],
      ['web', 'pending', 20],
    ])
  })

  it('searches dead letters newest first through their index, and finds them all', async () => {
    expect(tableScans(db, SQL.listNewest(['status'], false, 'failed'), { limit: 50 })).toEqual([])
    expect(tableScans(db, SQL.listNewest(['status'], true, 'failed'), { limit: 50, before: DELIVERED })).toEqual([])
    const page = await store.listNewest({ status: 'failed', limit: 50 })
    expect(page.map((d) => [d.messageId, d.status]).slice(0, 2)).toEqual([
      ['m19001', 'failed'],
      ['m18001', 'failed'],
    ])
    expect(page).toHaveLength(20)
  })

  it('searches pending deliveries newest first by id, without sorting them, so a page stops at its size', async () => {
    // No index has pending deliveries in id order (the claim's is by due time): the newest are read
    // first and the page ends once full. A backlog is new deliveries, so it is met early.
    for (const before of [false, true]) {
      const steps = plan(db, SQL.listNewest(['status'], before, 'pending'), { limit: 50, before: DELIVERED })
      expect(steps.join(' | ')).not.toMatch(/TEMP B-TREE/)
    }
    const page = await store.listNewest({ status: 'pending', limit: 5 })
    expect(page.map((d) => [d.messageId, d.status])).toEqual(
      [19002, 18002, 17002, 16002, 15002].map((i) => [`m${i}`, 'pending']),
    )
  })

  it('counts and replays dead letters, and counts what waits behind an endpoint, through an index', () => {
    expect(tableScans(db, SQL.countDeadLetters([]), { upTo: DELIVERED })).toEqual([])
    expect(tableScans(db, SQL.retryMatching([]), { upTo: DELIVERED, now: 0, chunk: 500 })).toEqual([])
    expect(tableScans(db, SQL.pendingFor, '[["web","Webhooks"]]')).toEqual([])
    expect(tableScans(db, SQL.failUnconfigured(2), 0, 'web', 'ios')).toEqual([])
  })

  it('refuses to write a status it does not know into a statement', () => {
    expect(() => SQL.listNewest(['status'], false, "failed' OR '1" as never)).toThrow(TypeError)
  })
})
