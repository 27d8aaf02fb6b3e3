import type { QueryConfig } from 'pg'
import { log } from '../../log'
import type { PostgresPool } from '../../kit/postgres/pool'
import { ORDER_KEY_COLUMN } from '../ordering/order-hold'
import { ORDER_INDEX, ORDER_INDEX_SQL } from './ordering-schema'
import { SCHEMA_UPGRADE_LIMIT_MS } from './schema'

// The session lock relays starting together take turns on while one builds the index
// ("tracklet" in ASCII, plus three: apart from the migration's and the other preparations').
const PREPARE_LOCK = (0x747261636b6c6574n + 3n).toString()

/**
 * Builds the ordering index beforehand, `CONCURRENTLY`, on a database whose queue exists without
 * it: the step then only finds it, and writers are never held while a big queue is read. Does
 * nothing on a fresh database (the step makes it on an empty table) or one that has it.
 */
export async function prepareOrderIndex(pool: PostgresPool): Promise<void> {
  if (!(await needsIndex(pool))) return
  const client = await pool.connect()
  const long = (text: string, values?: unknown[]) =>
    client.query({ text, values, query_timeout: SCHEMA_UPGRADE_LIMIT_MS } as QueryConfig)
  try {
    await client.query('SET statement_timeout = 0')
    await long('SELECT pg_advisory_lock($1)', [PREPARE_LOCK])
    try {
      if (!(await needsIndex(client))) return
      const why = 'preparing the queue for ordered delivery (an index built without blocking writes)'
      log.info(why, { event: 'schema-prepare' })
      // Instant: a nullable column without a default is not written into any row.
      await long(`ALTER TABLE queue ADD COLUMN IF NOT EXISTS ${ORDER_KEY_COLUMN} text`)
      await long(`DROP INDEX IF EXISTS ${ORDER_INDEX}`)
      await long(`CREATE INDEX CONCURRENTLY ${ORDER_INDEX_SQL}`)
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [PREPARE_LOCK])
    }
  } finally {
    await client.query('RESET statement_timeout').catch(() => {})
    client.release()
  }
}

// Whether the queue exists and has no valid ordering index.
async function needsIndex(db: Pick<PostgresPool, 'query'>): Promise<boolean> {
  const { rows } = await db.query<{ queue: boolean; valid: boolean | null }>(
    `SELECT to_regclass('queue') IS NOT NULL AS queue,
      (SELECT indisvalid FROM pg_index WHERE indexrelid = to_regclass('${ORDER_INDEX}')) AS valid`,
  )
  return rows[0]?.queue === true && rows[0].valid !== true
}
