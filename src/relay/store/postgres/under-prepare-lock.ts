import type { PoolClient, QueryConfig, QueryResult } from 'pg'
import type { PostgresPool } from '../../kit/postgres/pool'
import { MIGRATION_LOCK, SCHEMA_UPGRADE_LIMIT_MS } from './schema'

// The frame of a preparation: an index a migration step will need, built beforehand and
// `CONCURRENTLY` so it blocks no writer. Such a build takes minutes on a big outbox, so it runs on
// a connection of its own without the pool's statement timeout (bounded instead, on the client's
// side, by the upgrade's limit), under a session advisory lock that relays starting together take
// turns on; whether it is still needed is asked again once the lock is held, since another relay
// may have built it meanwhile.

/** A query of a preparation, bounded by {@link SCHEMA_UPGRADE_LIMIT_MS} instead of `storeTimeout`. */
export type LongQuery = (text: string, values?: unknown[]) => Promise<QueryResult>

/**
 * Runs `build` on a connection of its own (no statement timeout) holding the session advisory lock
 * `offset` past the migration lock (each preparation its own offset, so they never wait on the
 * migrations or on each other), when `needed` says so both before taking the lock and under it.
 * The lock is released and the connection reset and returned to the pool however `build` ends.
 */
export async function underPrepareLock(
  pool: PostgresPool,
  offset: bigint,
  needed: (db: Pick<PostgresPool, 'query'>) => Promise<boolean>,
  build: (client: PoolClient, long: LongQuery) => Promise<void>,
): Promise<void> {
  if (!(await needed(pool))) return
  const lock = (MIGRATION_LOCK + offset).toString()
  const client = await pool.connect()
  const long: LongQuery = (text, values) =>
    client.query({ text, values, query_timeout: SCHEMA_UPGRADE_LIMIT_MS } as QueryConfig)
  try {
    await client.query('SET statement_timeout = 0')
    await long('SELECT pg_advisory_lock($1)', [lock])
    try {
      if (await needed(client)) await build(client, long)
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [lock])
    }
  } finally {
    await client.query('RESET statement_timeout').catch(() => {})
    client.release()
  }
}
