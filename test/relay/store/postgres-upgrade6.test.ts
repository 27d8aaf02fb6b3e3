import { afterEach, describe, expect, it } from 'vitest'
import { addLogSink, type LogEvent } from '../../../src/relay/log'
import { MIGRATIONS } from '../../../src/relay/store/postgres/schema'
import { POSTGRES_SCHEMA6_STEP } from '../../../src/relay/store/postgres/schema6'
import { copyToSchema6Online } from '../../../src/relay/store/postgres/upgrade6'
import { openPool, type PostgresPool } from '../../../src/relay/kit/postgres/pool'
import { freshPostgresDatabase, sql } from '../../support/postgres'
import { openTestStore } from '../../support/stores'

// The online upgrade from schema 5 (docs/postgres.md): batches copied while a relay of schema 5
// keeps writing `deliveries`, then the step's short locked switch brings those writes across.
const SCHEMA5 = MIGRATIONS.slice(0, MIGRATIONS.indexOf(POSTGRES_SCHEMA6_STEP))

// Deliveries written by schema 5: ids 1…n, one in ten dead, one in ten pending, the rest delivered.
const ROWS = (from: number, to: number) => `
  INSERT INTO deliveries (source, destination, message_id, type, message, user_id, event, status, attempts,
    next_attempt_at, created_at, updated_at)
  SELECT 'web', 'Webhooks', 'm' || i, 'track', json_build_object('messageId', 'm' || i, 'userId', 'u' || (i % 7))::text,
    'u' || (i % 7), 'E', CASE WHEN i % 10 = 1 THEN 'failed' WHEN i % 10 = 2 THEN 'pending' ELSE 'delivered' END,
    1, i, i, i
  FROM generate_series(${from}, ${to}) AS i`

let pool: PostgresPool | undefined
let stopLogs: (() => void) | undefined
afterEach(async () => {
  stopLogs?.()
  await pool?.end()
  pool = stopLogs = undefined
})

async function schema5Database(rows: number): Promise<string> {
  const url = await freshPostgresDatabase()
  await sql(url, 'CREATE TABLE tracklet_schema (version integer NOT NULL)')
  for (const text of SCHEMA5) await sql(url, text)
  await sql(url, 'INSERT INTO tracklet_schema (version) VALUES ($1)', [SCHEMA5.length])
  await sql(url, ROWS(1, rows))
  return url
}

describe('the online upgrade to schema 6', () => {
  it('copies in batches, says how far it is every few seconds, and takes across what schema 5 wrote meanwhile', async () => {
    const url = await schema5Database(100)
    pool = await openPool(url)
    const lines: LogEvent[] = []
    stopLogs = addLogSink((event) => lines.push(event))
    // Each batch takes a second on this clock; progress every 3 s.
    let now = 0
    await copyToSchema6Online(pool, { batchSize: 10, progressEveryMs: 3000, now: () => (now += 1000) })

    const progress = lines.filter((l) => l.fields.event === 'schema-upgrade-progress').map((l) => l.msg)
    expect(progress[0]).toBe('upgrading to schema 6: 30 of 100 deliveries copied (30 %), about 7 s left')
    expect(progress.length).toBe(3)
    expect(progress.at(-1)).toMatch(/^upgrading to schema 6: 90 of 100 deliveries copied \(90 %\)/)
    const [copied] = await sql<{ n: number }>(url, 'SELECT count(*)::int AS n FROM messages')
    expect(copied!.n).toBe(100)

    // A relay of schema 5 still runs: it delivers a pending one, retries a dead one, erases a
    // user, ingests more and prunes.
    await sql(url, "UPDATE deliveries SET status = 'delivered', attempts = 2, updated_at = 500 WHERE id = 2")
    await sql(url, "UPDATE deliveries SET status = 'pending', attempts = 0, next_attempt_at = 0 WHERE id = 1")
    await sql(
      url,
      `UPDATE deliveries SET erased_at = 600, message = '{"erased":true}', user_id = NULL, event = NULL
       WHERE user_id = 'u3' AND status <> 'pending'`,
    )
    await sql(url, ROWS(101, 105))
    // Its retention deletes a delivered one.
    await sql(url, 'DELETE FROM deliveries WHERE id = 3')

    // The switch: this relay's migration.
    const store = await openTestStore('postgres', Date.now, url)
    try {
      expect((await store.get(2))?.status).toBe('delivered')
      expect((await store.get(1))?.status).toBe('pending')
      expect((await store.get(105))?.messageId).toBe('m105')
      expect(await store.get(3)).toBeUndefined()
      const all = await store.list({ after: 0, limit: 1000 })
      expect(all.length).toBe(104)
      const count = (status: string) => all.filter((d) => d.status === status).length
      expect([count('pending'), count('failed'), count('delivered')]).toEqual([11, 10, 83])
      // Erased before m101 (u3's too) was written: of the rest, only the pending ones keep their user.
      const u3 = await store.listNewest({ userId: 'u3', limit: 100 })
      expect(u3.filter((d) => d.id <= 100).map((d) => [d.messageId, d.status])).toEqual([['m52', 'pending']])
      expect(u3.filter((d) => d.id > 100).map((d) => d.messageId)).toEqual(['m101'])
      // The dead letter retried by the old relay, and the pending ones, are claimed from the queue.
      const due = await store.claim({ source: 'web', limit: 100, owner: 'new', leaseMs: 30_000 })
      expect(due.map((d) => d.id)).toContain(1)
      expect(due.length).toBe(11)
    } finally {
      await store.close()
    }
  })

  it('does nothing on a fresh database (the step makes the tables)', async () => {
    const url = await freshPostgresDatabase()
    pool = await openPool(url)
    await copyToSchema6Online(pool, { batchSize: 10 })
    const [made] = await sql<{ made: boolean }>(url, "SELECT to_regclass('messages') IS NOT NULL AS made")
    expect(made!.made).toBe(false)
  })
})
