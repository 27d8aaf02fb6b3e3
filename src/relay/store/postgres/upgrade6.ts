import { log } from '../../log'
import { type PostgresPool, transaction } from '../../kit/postgres/pool'
import { MIGRATION_LOCK, MIGRATIONS } from './schema'
import { copyDeliveries, POSTGRES_SCHEMA6_STEP, SCHEMA6_CHANGES_TRIGGER, SCHEMA6_TABLES } from './schema6'

// The online upgrade from schema 5 to 6 (docs/postgres.md, "Upgrading to schema 6"): schema 5's
// deliveries are copied into schema 6's tables in batches by id, each batch its own short
// transaction, while relays of schema 5 keep ingesting and delivering on `deliveries`; the schema
// step then brings what changed meanwhile up to date and switches, in one short locked step.

/** How the online upgrade runs; the defaults suit a production outbox, tests make it small. */
export interface OnlineUpgradeOptions {
  /** Deliveries copied per transaction: a few thousand, so that no batch holds anything for long. */
  batchSize?: number
  /** How often progress is logged, ms (rows moved of the total, and the time left). */
  progressEveryMs?: number
  /** The clock progress is judged on (epoch ms). */
  now?: () => number
}

const DEFAULT_BATCH = 5000
const DEFAULT_PROGRESS_EVERY_MS = 5000

/**
 * Copies a schema-5 outbox into schema 6's tables ahead of the step, when the database stands
 * exactly before it; does nothing otherwise (a fresh database, one already at schema 6, or one
 * older than schema 5, which the steps bring up to date in place). Relays starting together take
 * turns batch by batch (each under the migration lock) and share the work.
 */
export async function copyToSchema6Online(pool: PostgresPool, options: OnlineUpgradeOptions = {}): Promise<void> {
  const batchSize = options.batchSize ?? DEFAULT_BATCH
  const every = options.progressEveryMs ?? DEFAULT_PROGRESS_EVERY_MS
  const now = options.now ?? Date.now
  if ((await schemaVersion(pool)) !== MIGRATIONS.indexOf(POSTGRES_SCHEMA6_STEP)) return
  await transaction(pool, async (client) => {
    await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK.toString()])
    await client.query(SCHEMA6_TABLES)
    // Before any batch: a change made before a batch copies a row is in its copy, any later one is noted.
    await client.query(SCHEMA6_CHANGES_TRIGGER)
  })
  const started = now()
  const total = await remaining(pool)
  if (total === 0) return
  log.info(`upgrading the PostgreSQL outbox to schema 6 online: ${total} deliveries to copy`, {
    event: 'schema-upgrade',
  })
  let moved = 0
  let loggedAt = started
  for (;;) {
    const copied = await transaction(pool, async (client) => {
      await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK.toString()])
      // Another relay may have finished the upgrade meanwhile: deliveries is then a view.
      if ((await schemaVersion(client)) !== MIGRATIONS.indexOf(POSTGRES_SCHEMA6_STEP)) return 0
      const { rows } = await client.query<{ low: number; high: number | null }>(NEXT_BATCH, [batchSize])
      const { low, high } = rows[0]!
      if (high === null) return 0
      for (const sql of copyDeliveries('id > $1 AND id <= $2')) await client.query(sql, [low, high])
      const counted = await client.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM messages WHERE id > $1 AND id <= $2',
        [low, high],
      )
      return counted.rows[0]!.n
    })
    moved += copied
    const at = now()
    if (at - loggedAt >= every) {
      loggedAt = at
      log.info(progressLine(moved, total, at - started), { event: 'schema-upgrade-progress', moved, total })
    }
    if (copied < batchSize) break
  }
  log.info(`copied ${moved} deliveries to schema 6 in ${Math.round((now() - started) / 1000)} s; switching`, {
    event: 'schema-upgrade',
  })
}

/** A progress line: rows moved of the total, and the time left at the pace so far. */
export function progressLine(moved: number, total: number, elapsedMs: number): string {
  const left = moved === 0 ? undefined : Math.max(0, Math.round(((total - moved) * elapsedMs) / moved / 1000))
  const percent = Math.min(100, Math.floor((moved / total) * 100))
  return `upgrading to schema 6: ${moved} of ${total} deliveries copied (${percent} %)${left === undefined ? '' : `, about ${left} s left`}`
}

// The next batch's ids: above the highest copied (the messages' highest id), at most $1 of them.
const NEXT_BATCH = `
  WITH copied AS (SELECT coalesce(max(id), 0) AS id FROM messages)
  SELECT (SELECT id FROM copied) AS low,
    (SELECT max(id) FROM (SELECT id FROM deliveries WHERE id > (SELECT id FROM copied) ORDER BY id LIMIT $1) batch) AS high`

// Deliveries not yet copied (an estimate for the progress lines: relays of schema 5 still write).
async function remaining(pool: PostgresPool): Promise<number> {
  const { rows } = await pool.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM deliveries WHERE id > (SELECT coalesce(max(id), 0) FROM messages)',
  )
  return rows[0]!.n
}

async function schemaVersion(db: Pick<PostgresPool, 'query'>): Promise<number> {
  const made = await db.query<{ made: boolean }>("SELECT to_regclass('tracklet_schema') IS NOT NULL AS made")
  if (!made.rows[0]!.made) return 0
  const { rows } = await db.query<{ version: number }>(
    'SELECT coalesce(max(version), 0) AS version FROM tracklet_schema',
  )
  return rows[0]!.version
}
