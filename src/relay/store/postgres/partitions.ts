import type { PoolClient } from 'pg'
import { log, plural } from '../../log'
import { type PostgresPool, transaction } from '../../kit/postgres/pool'
import { MIGRATION_LOCK } from './schema'

// Schema 6's retention (docs/postgres.md): messages, outcomes and the requests (attempts) are
// partitioned by day of their delivery's created_at, so a day past `retention` goes in one
// statement instead of a million deletes.

/** A partition's span: one UTC day, in the epoch ms of `created_at`. */
export const DAY_MS = 86_400_000

/** Days made ahead of the current one, so that a relay down for a while still finds them made. */
export const DAYS_AHEAD = 2

// The tables partitioned by day, and what each day's partition is named after.
const PARTITIONED = ['messages', 'outcomes', 'attempts'] as const

// The days of each database (by its pool) whose rows sit in the kept partition already.
const occupiedDays = new WeakMap<PostgresPool, Set<string>>()

// PostgreSQL's error for a partition whose range holds rows of the DEFAULT partition already.
const CHECK_VIOLATION = '23514'

/** The name of `table`'s partition for the day starting at `day` (epoch ms, a multiple of DAY_MS). */
export function partitionName(table: string, day: number): string {
  return `${table}_${new Date(day).toISOString().slice(0, 10).replaceAll('-', '_')}`
}

/** The start of the UTC day `at` falls in, epoch ms. */
export function dayOf(at: number): number {
  return Math.floor(at / DAY_MS) * DAY_MS
}

/**
 * Makes the partitions of the day `now` falls in and of the {@link DAYS_AHEAD} days after it,
 * under the migration lock (relays starting together take turns). A day whose rows already sit
 * in the kept (DEFAULT) partition (written before the upgrade, or while no relay made it) is left
 * there: retention deletes those rows one by one.
 */
export async function makeDaysAhead(pool: PostgresPool, now: number): Promise<void> {
  // Days found with rows in the kept partition already: not tried again by this process (each try
  // reads the whole kept partition under its lock, and after an upgrade it holds every old row).
  const occupied = occupiedDays.get(pool) ?? new Set<string>()
  occupiedDays.set(pool, occupied)
  await transaction(pool, async (client) => {
    await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK.toString()])
    const existing = await dayPartitions(client)
    for (let day = dayOf(now); day <= dayOf(now) + DAYS_AHEAD * DAY_MS; day += DAY_MS) {
      for (const table of PARTITIONED) {
        if (existing.has(partitionName(table, day)) || occupied.has(partitionName(table, day))) continue
        await client.query('SAVEPOINT day')
        try {
          await client.query(
            `CREATE TABLE ${partitionName(table, day)} PARTITION OF ${table} FOR VALUES FROM (${day}) TO (${day + DAY_MS})`,
          )
          await client.query('RELEASE SAVEPOINT day')
        } catch (error) {
          if ((error as { code?: unknown }).code !== CHECK_VIOLATION) throw error
          await client.query('ROLLBACK TO SAVEPOINT day')
          occupied.add(partitionName(table, day))
        }
      }
    }
  })
}

/**
 * Drops every day partition that ends at or before `before` (epoch ms), one day per transaction:
 * the day is detached, the messages and requests of its deliveries the queue still names (pending
 * or dead, however old) are copied into the kept partitions, and the day's tables are dropped
 * whole. Answers how many deliveries went.
 */
export async function dropDaysBefore(pool: PostgresPool, before: number): Promise<number> {
  const days = [...(await transaction(pool, dayPartitions))]
    .filter((name) => name.startsWith('messages_'))
    .map((name) => Date.parse(`${name.slice('messages_'.length).replaceAll('_', '-')}T00:00:00Z`))
    .filter((day) => day + DAY_MS <= before)
    .sort((a, b) => a - b)
  let dropped = 0
  for (const day of days) {
    const messages = partitionName('messages', day)
    const outcomes = partitionName('outcomes', day)
    const attempts = partitionName('attempts', day)
    // Counted before the lock below (a past day gets no new rows; reading a million takes a while).
    const { rows } = await pool.query<{ n: string }>(
      'SELECT count(*) AS n FROM messages WHERE created_at >= $1 AND created_at < $2',
      [day, day + DAY_MS],
    )
    const gone = await transaction(pool, async (client) => {
      await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK.toString()])
      // Another relay's sweep dropped it meanwhile.
      if (!(await hasTable(client, messages))) return 0
      // A day whose requests were written into the kept partition (./attempts-by-day.ts: the
      // days made before it; one made while no relay ran) has none of its own: they are pruned
      // with their deliveries, one by one.
      const ownRequests = await hasTable(client, attempts)
      // From the detach to the commit every statement on these tables waits, so the day's
      // deliveries still queued are copied aside first, while reading the day blocks no one
      // (a day of a million: a scan of most of a second). Temporary tables: no WAL.
      // The rows of `from` whose `key` is one of `ids`, copied into `table`.
      const copy = (table: string, from: string, key: string, ids: string[]) =>
        client.query(`INSERT INTO ${table} SELECT * FROM ${from} WHERE ${key} = ANY($1::bigint[])`, [ids])
      const before = await queuedOn(client, day)
      await client.query('CREATE TEMPORARY TABLE kept_messages (LIKE messages) ON COMMIT DROP')
      await copy('kept_messages', messages, 'id', before)
      if (ownRequests) {
        await client.query('CREATE TEMPORARY TABLE kept_attempts (LIKE attempts) ON COMMIT DROP')
        await copy('kept_attempts', attempts, 'delivery_id', before)
      }
      // A detach waits for the statements reading the table; a short wait, then the next sweep.
      await client.query("SET LOCAL lock_timeout = '5s'")
      await client.query(`ALTER TABLE messages DETACH PARTITION ${messages}`)
      await client.query(`ALTER TABLE outcomes DETACH PARTITION ${outcomes}`)
      if (ownRequests) await client.query(`ALTER TABLE attempts DETACH PARTITION ${attempts}`)
      // The range is no longer a day's: these rows land in the kept partitions. What the queue
      // holds now: a delivery settled meanwhile is left out (its outcome went with the day), one
      // put back by hand meanwhile is read from the day itself.
      const still = await queuedOn(client, day)
      const seen = new Set(before)
      const late = still.filter((id) => !seen.has(id))
      let kept = (await copy('messages', 'kept_messages', 'id', still)).rowCount ?? 0
      if (late.length > 0) kept += (await copy('messages', messages, 'id', late)).rowCount ?? 0
      if (ownRequests) {
        await copy('attempts', 'kept_attempts', 'delivery_id', still)
        if (late.length > 0) await copy('attempts', attempts, 'delivery_id', late)
      }
      await client.query(`DROP TABLE ${messages}, ${outcomes}${ownRequests ? `, ${attempts}` : ''}`)
      return Number(rows[0]!.n) - kept
    })
    dropped += gone
    log.info(
      `retention: dropped the day ${new Date(day).toISOString().slice(0, 10)} whole (${plural(gone, 'settled delivery', 'settled deliveries')})`,
      { event: 'retention-day', pruned: gone },
    )
  }
  return dropped
}

// The ids of the day's deliveries still in the queue (pending or dead), as text (bigint).
async function queuedOn(client: PoolClient, day: number): Promise<string[]> {
  const { rows } = await client.query<{ id: string }>(
    'SELECT id FROM queue WHERE created_at >= $1 AND created_at < $2',
    [day, day + DAY_MS],
  )
  return rows.map((r) => r.id)
}

// Whether a table of that name exists.
async function hasTable(client: PoolClient, name: string): Promise<boolean> {
  const { rows } = await client.query<{ found: boolean }>('SELECT to_regclass($1) IS NOT NULL AS found', [name])
  return rows[0]!.found
}

// The names of the day partitions of the partitioned tables (never the kept one).
async function dayPartitions(client: PoolClient): Promise<Set<string>> {
  const { rows } = await client.query<{ name: string }>(
    `SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
     WHERE i.inhparent IN (${PARTITIONED.map((table) => `'${table}'::regclass`).join(', ')})
       AND pg_get_expr(c.relpartbound, c.oid) <> 'DEFAULT'`,
  )
  return new Set(rows.map((r) => r.name))
}

/**
 * Retention on schema 6: the days ahead made, the days wholly before `before` dropped, then at
 * most `limit` settled deliveries that no dropped day took deleted one by one (`prune`). Answers
 * how many deliveries went. `now` is the database's clock (the clock of created_at).
 */
export async function pruneSettled(
  pool: PostgresPool,
  span: { before: number; limit: number; now: number; days: boolean },
  pruneRows: () => Promise<number>,
): Promise<number> {
  let dropped = 0
  if (span.days) {
    await makeDaysAhead(pool, span.now)
    dropped = await dropDaysBefore(pool, span.before)
  }
  return dropped + (await pruneRows())
}
