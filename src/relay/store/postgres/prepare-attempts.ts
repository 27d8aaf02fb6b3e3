import type { QueryConfig } from 'pg'
import { log } from '../../log'
import { ATTEMPTS_DAY_KEY } from './attempts-by-day'
import type { PostgresPool } from '../../kit/postgres/pool'
import { SCHEMA_UPGRADE_LIMIT_MS } from './schema'

// The step that partitions the requests log by day (./attempts-by-day.ts) needs a primary key
// holding the partition key on the table it keeps. Built inside the migration's transaction, on
// a million requests it held the migration's locks about a second (bench/pg-upgrade6.mjs: the
// switch from schema 5 went from 72 ms to 1,059 ms), and recording outcomes waited for it. Built
// here beforehand, `CONCURRENTLY`, it blocks no writer; the step then only names it.

// The session lock relays starting together take turns on while one of them builds the key
// ("tracklet" in ASCII, plus one: apart from the migration lock).
const PREPARE_LOCK = (0x747261636b6c6574n + 1n).toString()

/**
 * Builds, without blocking writers, the key the requests log's day partitions need, when the
 * database still has the unpartitioned `attempts` (schema 5, or schema 6 before the step). Does
 * nothing on a fresh database or one upgraded already. A build cut short (an invalid index) is
 * dropped and made again.
 */
export async function prepareAttemptsByDay(pool: PostgresPool): Promise<void> {
  if (!(await unpartitioned(pool))) return
  const client = await pool.connect()
  const long = (text: string, values?: unknown[]) =>
    client.query({ text, values, query_timeout: SCHEMA_UPGRADE_LIMIT_MS } as QueryConfig)
  try {
    await client.query('SET statement_timeout = 0')
    await long('SELECT pg_advisory_lock($1)', [PREPARE_LOCK])
    try {
      if (!(await unpartitioned(client))) return
      const { rows } = await client.query<{ valid: boolean }>(
        'SELECT indisvalid AS valid FROM pg_index WHERE indexrelid = to_regclass($1)',
        [ATTEMPTS_DAY_KEY],
      )
      if (rows[0]?.valid === true) return
      log.info('preparing the requests log for its day partitions (an index built without blocking writes)', {
        event: 'schema-prepare',
      })
      // Instant (a default that is a constant is not written into each row); the old version names its columns.
      await long('ALTER TABLE attempts ADD COLUMN IF NOT EXISTS created_at bigint NOT NULL DEFAULT 0')
      if (rows[0]?.valid === false) await long(`DROP INDEX ${ATTEMPTS_DAY_KEY}`)
      await long(`CREATE UNIQUE INDEX CONCURRENTLY ${ATTEMPTS_DAY_KEY} ON attempts (delivery_id, id, created_at)`)
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [PREPARE_LOCK])
    }
  } finally {
    await client.query('RESET statement_timeout').catch(() => {})
    client.release()
  }
}

// Whether `attempts` is a plain table (not yet partitioned, not missing).
async function unpartitioned(db: Pick<PostgresPool, 'query'>): Promise<boolean> {
  const { rows } = await db.query<{ kind: string }>(
    "SELECT relkind AS kind FROM pg_class WHERE oid = to_regclass('attempts')",
  )
  return rows[0]?.kind === 'r'
}
