import type { PoolClient, QueryConfig } from 'pg'
import type { DeliverableMessage } from '../../../shared/message'
import { type AttemptRow, type DeliveryRow, toDeliveryViews } from '../rows'
import type {
  AttemptOutcome,
  AudienceChange,
  BacklogRow,
  ClaimRequest,
  DeliveryQuery,
  DeliveryView,
  DueDelivery,
  NewDelivery,
  Store,
} from '../store'
import {
  DEFAULT_POOL_SETTINGS,
  databaseError,
  openPool,
  type PgLoader,
  type PoolSettings,
  type PostgresPool,
} from './pool'
import { migrate } from './schema'

/** Options of {@link openPostgresStore}, for tests and the bench. */
export interface PostgresStoreOptions {
  /** The time source, epoch ms. */
  now?: () => number
  /** Loads the `pg` module. */
  loadPg?: PgLoader
  pool?: Partial<PoolSettings>
}

/**
 * Opens the store on the PostgreSQL database at `url`: connects, and brings the schema up to
 * date (under an advisory lock, so relays may start together). Any number of relays may share
 * the database.
 *
 * @throws {RelayError} `ERR_RELAY_DATABASE` when the database cannot be reached or prepared (the
 * message names it by host, port and database, never with the password), and
 * `ERR_RELAY_DRIVER_MISSING` when `pg` is not installed.
 */
export async function openPostgresStore(url: string, options: PostgresStoreOptions = {}): Promise<PostgresStore> {
  const pool = await openPool(url, { ...DEFAULT_POOL_SETTINGS, ...options.pool }, options.loadPg)
  try {
    await migrate(pool)
  } catch (error) {
    await pool.end().catch(() => {})
    throw databaseError(url, 'prepare', error)
  }
  return new PostgresStore(pool, options.now)
}

// The statements on the hot paths are named, so each connection parses and plans them once.
// Arrays travel as one parameter each (unnest), so a batch of any size is one statement, one
// round trip.

const ENQUEUE = `
  INSERT INTO deliveries (source, destination, message_id, type, message, status, next_attempt_at, created_at, updated_at)
  SELECT s, d, m, t, j, 'pending', $6, $6, $6
  FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[]) AS u (s, d, m, t, j)
  ON CONFLICT (source, destination, message_id) DO NOTHING`

// The worker's writes (claims, outcomes, renewals) commit without waiting for the WAL to reach
// the disk (synchronous_commit off for that transaction alone, set within the statement so it
// costs no round trip). A database crash may then lose the last few of them: those deliveries
// are pending again and are sent again — at-least-once holds — while ingest, whose 2xx promises
// the message is kept, always waits for the disk. (The SQLite store does the same.)
const RELAXED = `relaxed AS (SELECT set_config('synchronous_commit', 'off', true))`

// One statement: picks the source's oldest due deliveries that no live lease holds, skipping rows
// another relay is claiming at this instant (SKIP LOCKED), and leases them. Row locks last only
// for the statement; from then on the lease (lease_until) keeps other relays off.
const CLAIM = `
  WITH ${RELAXED}
  UPDATE deliveries d SET lease_until = $5, lease_owner = $4
  FROM (
    SELECT id FROM deliveries
    WHERE source = $1 AND status = 'pending' AND next_attempt_at <= $2
      AND (lease_until IS NULL OR lease_until <= $2)
    ORDER BY next_attempt_at, id
    LIMIT $3
    FOR UPDATE SKIP LOCKED
  ) due, relaxed
  WHERE d.id = due.id
  RETURNING d.id, d.source, d.destination, d.message, d.attempts, d.first_attempt_at, d.next_attempt_at`

// The later of: the next delivery not yet due, and the end of the first live lease on a due one.
// (A delivery not yet due is never leased: a claim takes only due ones, and recording ends the lease.)
const NEXT_DUE = `
  SELECT least(
    (SELECT next_attempt_at FROM deliveries
     WHERE source = $1 AND status = 'pending' AND next_attempt_at > $2
     ORDER BY next_attempt_at LIMIT 1),
    (SELECT min(lease_until) FROM deliveries
     WHERE source = $1 AND status = 'pending' AND next_attempt_at <= $2 AND lease_until > $2)
  ) AS at`

// One statement for a whole batch of outcomes: the deliveries' new state (only those still
// pending: one recorded already by a relay whose lease ran out keeps its state) and every request
// into the attempts log.
const RECORD = `
  WITH ${RELAXED}, outcome AS (
    SELECT * FROM unnest($1::bigint[], $2::text[], $3::bigint[], $4::bigint[], $5::text[])
      AS o (id, status, at, next_attempt_at, error)
  ), updated AS (
    UPDATE deliveries d SET
      status = outcome.status, attempts = d.attempts + 1, first_attempt_at = coalesce(d.first_attempt_at, outcome.at),
      next_attempt_at = outcome.next_attempt_at, last_error = outcome.error, updated_at = $6,
      lease_until = NULL, lease_owner = NULL
    FROM outcome, relaxed
    WHERE d.id = outcome.id AND d.status = 'pending'
    RETURNING d.id
  )
  INSERT INTO attempts (delivery_id, at, url, status, error, ms)
  SELECT * FROM unnest($7::bigint[], $8::bigint[], $9::text[], $10::int[], $11::text[], $12::int[])`

const RENEW = `
  WITH ${RELAXED}
  UPDATE deliveries SET lease_until = $3 FROM relaxed
  WHERE id = ANY($2::bigint[]) AND lease_owner = $1 AND status = 'pending'`

const RELEASE = `
  UPDATE deliveries SET lease_until = NULL, lease_owner = NULL
  WHERE id = ANY($2::bigint[]) AND lease_owner = $1 AND status = 'pending'`

// Deleted oldest first, skipping rows being written at this instant; attempts go with them.
const PRUNE = `
  WITH gone AS (
    DELETE FROM deliveries WHERE id IN (
      SELECT id FROM deliveries WHERE status = 'delivered' AND updated_at < $1
      ORDER BY updated_at LIMIT $2 FOR UPDATE SKIP LOCKED)
    RETURNING id
  ), attempts_gone AS (
    DELETE FROM attempts WHERE delivery_id IN (SELECT id FROM gone)
  )
  SELECT count(*) AS count FROM gone`

/**
 * The {@link Store} on PostgreSQL (`pg`), shared by any number of relays. Each method is one
 * statement (one round trip, its own transaction) except an audience sync, which is one
 * transaction on one connection.
 */
export class PostgresStore implements Store {
  readonly kind = 'postgres'
  /** The connection pool (for sibling modules of this store, and tests that break it on purpose). */
  readonly pool: PostgresPool
  readonly #now: () => number
  #closed: Promise<void> | undefined

  constructor(pool: PostgresPool, now: () => number = Date.now) {
    this.pool = pool
    this.#now = now
  }

  async enqueue(deliveries: readonly NewDelivery[]): Promise<number> {
    if (deliveries.length === 0) return 0
    return insertDeliveries(this.pool, deliveries, this.#now())
  }

  async claim(request: ClaimRequest): Promise<DueDelivery[]> {
    if (request.limit <= 0) return []
    const { rows } = await this.pool.query<DeliveryRow>({
      name: 'tracklet-claim',
      text: CLAIM,
      values: [request.source, request.now, request.limit, request.owner, request.leaseUntil],
    })
    // RETURNING gives no order: restore "oldest due first".
    rows.sort((a, b) => a.next_attempt_at - b.next_attempt_at || a.id - b.id)
    return rows.map((row) => ({
      id: row.id,
      source: row.source,
      destination: row.destination,
      message: JSON.parse(row.message) as DeliverableMessage,
      attempts: row.attempts,
      firstAttemptAt: row.first_attempt_at ?? undefined,
    }))
  }

  async renew(owner: string, ids: readonly number[], leaseUntil: number): Promise<void> {
    if (ids.length === 0) return
    await this.pool.query({ name: 'tracklet-renew', text: RENEW, values: [owner, ids, leaseUntil] })
  }

  async release(owner: string, ids: readonly number[]): Promise<void> {
    if (ids.length === 0) return
    await this.pool.query({ name: 'tracklet-release', text: RELEASE, values: [owner, ids] })
  }

  async nextDueAt(source: string, now: number): Promise<number | undefined> {
    const { rows } = await this.pool.query<{ at: number | null }>({
      name: 'tracklet-next-due',
      text: NEXT_DUE,
      values: [source, now],
    })
    return rows[0]?.at ?? undefined
  }

  async record(outcomes: readonly AttemptOutcome[]): Promise<void> {
    if (outcomes.length === 0) return
    const now = this.#now()
    const ids: number[] = []
    const statuses: string[] = []
    const ats: number[] = []
    const nextAts: number[] = []
    const errors: (string | null)[] = []
    const attemptIds: number[] = []
    const attemptAts: number[] = []
    const urls: string[] = []
    const httpStatuses: (number | null)[] = []
    const requestErrors: (string | null)[] = []
    const durations: number[] = []
    for (const o of outcomes) {
      ids.push(o.id)
      statuses.push(o.next.status)
      ats.push(o.at)
      nextAts.push(o.next.status === 'pending' ? o.next.nextAttemptAt : now)
      errors.push(o.next.status === 'delivered' ? null : o.next.error)
      for (const r of o.requests) {
        attemptIds.push(o.id)
        attemptAts.push(o.at)
        urls.push(r.url)
        httpStatuses.push(r.status ?? null)
        requestErrors.push(r.error ?? null)
        durations.push(Math.round(r.ms))
      }
    }
    await this.pool.query({
      name: 'tracklet-record',
      text: RECORD,
      values: [
        ids,
        statuses,
        ats,
        nextAts,
        errors,
        now,
        attemptIds,
        attemptAts,
        urls,
        httpStatuses,
        requestErrors,
        durations,
      ],
    })
  }

  async failUnconfiguredSources(configured: readonly string[]): Promise<number> {
    const { rowCount } = await this.pool.query(
      `UPDATE deliveries SET status = 'failed', last_error = 'source "' || source || '" is no longer configured',
         updated_at = $1, lease_until = NULL, lease_owner = NULL
       WHERE status = 'pending' AND NOT (source = ANY($2::text[]))`,
      [this.#now(), configured],
    )
    return rowCount ?? 0
  }

  async retry(id: number): Promise<'retried' | 'not-found' | 'not-failed'> {
    const now = this.#now()
    // One statement: the delivery's status before, and whether it was put back in the queue.
    const { rows } = await this.pool.query<{ status: string; retried: boolean }>(
      `WITH retried AS (
         UPDATE deliveries SET status = 'pending', attempts = 0, first_attempt_at = NULL, next_attempt_at = $2,
           updated_at = $2, lease_until = NULL, lease_owner = NULL
         WHERE id = $1 AND status = 'failed'
         RETURNING id)
       SELECT status, EXISTS (SELECT 1 FROM retried) AS retried FROM deliveries WHERE id = $1`,
      [id, now],
    )
    const row = rows[0]
    if (row === undefined) return 'not-found'
    return row.retried ? 'retried' : 'not-failed'
  }

  async list(query: DeliveryQuery): Promise<DeliveryView[]> {
    const { rows } = await this.pool.query<DeliveryRow>(
      `SELECT * FROM deliveries
       WHERE id > $1 AND ($2::text IS NULL OR status = $2) AND ($3::text IS NULL OR source = $3)
       ORDER BY id LIMIT $4`,
      [query.after, query.status ?? null, query.source ?? null, query.limit],
    )
    if (rows.length === 0) return []
    const attempts = await this.pool.query<AttemptRow>(
      'SELECT delivery_id, at, url, status, error, ms FROM attempts WHERE delivery_id = ANY($1::bigint[]) ORDER BY id',
      [rows.map((r) => r.id)],
    )
    return toDeliveryViews(rows, attempts.rows)
  }

  async syncAudience(
    source: string,
    audience: string,
    userIds: readonly string[],
    announce: (change: AudienceChange) => NewDelivery[],
  ): Promise<AudienceChange> {
    return this.#transaction(async (client) => {
      // Two relays syncing the same audience at once take turns: each compares with the
      // memberships the other committed, so no join or leave is announced twice or lost.
      await client.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [
        `tracklet:audience:${JSON.stringify([source, audience])}`,
      ])
      const { rows } = await client.query<{ user_id: string }>(
        'SELECT user_id FROM audience_members WHERE source = $1 AND audience = $2',
        [source, audience],
      )
      const current = new Set(rows.map((r) => r.user_id))
      const wanted = new Set(userIds)
      const change = {
        added: [...wanted].filter((id) => !current.has(id)),
        removed: [...current].filter((id) => !wanted.has(id)),
      }
      if (change.added.length > 0) {
        await client.query(
          'INSERT INTO audience_members (source, audience, user_id) SELECT $1, $2, unnest($3::text[])',
          [source, audience, change.added],
        )
      }
      if (change.removed.length > 0) {
        await client.query(
          'DELETE FROM audience_members WHERE source = $1 AND audience = $2 AND user_id = ANY($3::text[])',
          [source, audience, change.removed],
        )
      }
      const deliveries = announce(change)
      if (deliveries.length > 0) await insertDeliveries(client, deliveries, this.#now())
      return change
    })
  }

  async prune(before: number, limit: number): Promise<number> {
    const { rows } = await this.pool.query<{ count: number }>({
      name: 'tracklet-prune',
      text: PRUNE,
      values: [before, limit],
    })
    return rows[0]?.count ?? 0
  }

  async backlog(): Promise<BacklogRow[]> {
    const { rows } = await this.pool.query<BacklogRow>(
      `SELECT source, status, count(*) AS count, min(created_at) AS "oldestCreatedAt" FROM deliveries
       WHERE status IN ('pending', 'failed') GROUP BY source, status ORDER BY source, status`,
    )
    return rows
  }

  /** Ends every connection, waiting for queries under way. Idempotent. */
  close(): Promise<void> {
    this.#closed ??= this.pool.end()
    return this.#closed
  }

  // Runs `work` in one transaction on one connection: committed whole, or rolled back.
  async #transaction<T>(work: (client: PoolClient) => Promise<T>): Promise<T> {
    const client = await this.pool.connect()
    let failed = false
    try {
      await client.query('BEGIN')
      const result = await work(client)
      await client.query('COMMIT')
      return result
    } catch (error) {
      failed = true
      await client.query('ROLLBACK').catch(() => {})
      throw error
    } finally {
      // A connection that failed mid-transaction is discarded rather than reused.
      client.release(failed)
    }
  }
}

// Writes new deliveries in one statement (on the pool, or on a transaction's connection).
async function insertDeliveries(
  db: { query: (config: QueryConfig) => Promise<{ rowCount: number | null }> },
  deliveries: readonly NewDelivery[],
  now: number,
): Promise<number> {
  const sources: string[] = []
  const destinations: string[] = []
  const messageIds: string[] = []
  const types: string[] = []
  const messages: string[] = []
  for (const d of deliveries) {
    sources.push(d.source)
    destinations.push(d.destination)
    messageIds.push(d.messageId)
    types.push(d.type)
    messages.push(d.json)
  }
  const { rowCount } = await db.query({
    name: 'tracklet-enqueue',
    text: ENQUEUE,
    values: [sources, destinations, messageIds, types, messages, now],
  })
  return rowCount ?? 0
}
