import { log } from '../../log'
import { ATTEMPTS_DAY_KEY } from './attempts-by-day'
import type { PostgresPool } from '../../kit/postgres/pool'
import { underPrepareLock } from './under-prepare-lock'

// The step that partitions the requests log by day (./attempts-by-day.ts) needs a primary key
// holding the partition key on the table it keeps. Built inside the migration's transaction, on
// a million requests it held the migration's locks about a second (bench/pg-upgrade6.mjs: the
// switch from schema 5 went from 72 ms to 1,059 ms), and recording outcomes waited for it. Built
// here beforehand, `CONCURRENTLY`, it blocks no writer; the step then only names it.

// This preparation's lock, past the migration lock ("tracklet" in ASCII): one apart from it.
const PREPARE_LOCK_OFFSET = 1n

/**
 * Builds, without blocking writers, the key the requests log's day partitions need, when the
 * database still has the unpartitioned `attempts` (schema 5, or schema 6 before the step). Does
 * nothing on a fresh database or one upgraded already. A build cut short (an invalid index) is
 * dropped and made again.
 */
export async function prepareAttemptsByDay(pool: PostgresPool): Promise<void> {
  await underPrepareLock(pool, PREPARE_LOCK_OFFSET, unpartitioned, async (client, long) => {
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
  })
}

// Whether `attempts` is a plain table (not yet partitioned, not missing).
async function unpartitioned(db: Pick<PostgresPool, 'query'>): Promise<boolean> {
  const { rows } = await db.query<{ kind: string }>(
    "SELECT relkind AS kind FROM pg_class WHERE oid = to_regclass('attempts')",
  )
  return rows[0]?.kind === 'r'
}
