import type Database from 'better-sqlite3'
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
import { openSqliteDatabase, type SqliteDatabase } from './schema'
import { StatementCache } from './statements'

/**
 * Opens the SQLite store at `path` (a file, created when missing, or `':memory:'`). One SQLite
 * file serves one relay: leases left by a relay that died are void at once when it starts again.
 *
 * @throws {RelayError} `ERR_RELAY_DATABASE` or `ERR_RELAY_DRIVER_MISSING`.
 */
export async function openSqliteStore(
  path: string,
  now: () => number = Date.now,
  options: SqliteStoreOptions = {},
): Promise<SqliteStore> {
  return new SqliteStore(await openSqliteDatabase(path), now, options)
}

// [relay-workers] The one change `tracklet relay --workers N` needs of this store, to re-apply on
// the restructured store: an open option that skips the clearing of leases (and probes, in
// SqliteCircuits), which the primary does once before it forks.
/** How a SQLite store is opened. */
export interface SqliteStoreOptions {
  /**
   * Several processes use the file at once (`tracklet relay --workers N`): the leases standing
   * are theirs, not a previous run's, so they are left to expire rather than cleared.
   */
  sharedByProcesses?: boolean
}

/**
 * The {@link Store} on SQLite (better-sqlite3, WAL, `synchronous = FULL` for ingest). The driver is
 * synchronous: each method does its work at once, in one transaction, and returns a settled
 * promise. Statements are prepared once.
 */
export class SqliteStore implements Store {
  readonly kind = 'sqlite'
  /** Whether other processes use the file at once ([relay-workers], {@link SqliteStoreOptions}). */
  readonly sharedByProcesses: boolean
  /** The database (exposed for tests that need to break it on purpose). */
  readonly db: SqliteDatabase
  /** The time source, epoch ms (injectable so retry windows can be tested without waiting). */
  readonly #now: () => number
  readonly #insert: Database.Statement
  readonly #claim: Database.Statement
  readonly #nextDue: Database.Statement
  readonly #update: Database.Statement
  readonly #insertAttempt: Database.Statement
  readonly #retry: Database.Statement
  readonly #statusOf: Database.Statement
  readonly #list: Database.Statement
  readonly #backlog: Database.Statement
  readonly #members: Database.Statement
  readonly #addMember: Database.Statement
  readonly #removeMember: Database.Statement
  readonly #enqueueAll: (deliveries: readonly NewDelivery[]) => number
  readonly #recordAll: (outcomes: readonly AttemptOutcome[]) => void
  readonly #claimAll: (request: ClaimRequest) => DueDelivery[]
  readonly #syncAll: Database.Transaction<
    (
      source: string,
      audience: string,
      userIds: readonly string[],
      announce: (change: AudienceChange) => NewDelivery[],
    ) => AudienceChange
  >
  readonly #pruneAll: Database.Transaction<(before: number, limit: number) => number>
  readonly #statements: StatementCache
  #closed = false

  constructor(db: SqliteDatabase, now: () => number = Date.now, options: SqliteStoreOptions = {}) {
    this.db = db
    this.#now = now
    this.#statements = new StatementCache(db)
    this.sharedByProcesses = options.sharedByProcesses ?? false
    // One file, one relay: a lease still standing was taken by this relay's previous run.
    // [relay-workers] Unless the file is shared: then the primary cleared them once, before forking.
    if (!this.sharedByProcesses)
      db.prepare('UPDATE deliveries SET lease_until = NULL, lease_owner = NULL WHERE lease_until IS NOT NULL').run()
    this.#insert = db.prepare(`
      INSERT OR IGNORE INTO deliveries (source, destination, message_id, type, message, status, next_attempt_at, created_at, updated_at)
      VALUES (?, ?, ?, ?, ?, 'pending', ?, ?, ?)`)
    this.#claim = db.prepare(`
      UPDATE deliveries SET lease_until = @leaseUntil, lease_owner = @owner
      WHERE id IN (
        SELECT id FROM deliveries
        WHERE source = @source AND status = 'pending' AND next_attempt_at <= @now
          AND (lease_until IS NULL OR lease_until <= @now)
        ORDER BY next_attempt_at, id LIMIT @limit)
      RETURNING id, source, destination, message, attempts, first_attempt_at, next_attempt_at`)
    this.#nextDue = db.prepare(`
      SELECT MIN(max(next_attempt_at, coalesce(lease_until, 0))) AS at FROM deliveries
      WHERE source = ? AND status = 'pending' AND max(next_attempt_at, coalesce(lease_until, 0)) > ?`)
    this.#update = db.prepare(`
      UPDATE deliveries SET status = ?, attempts = attempts + 1, first_attempt_at = coalesce(first_attempt_at, ?),
        next_attempt_at = ?, last_error = ?, updated_at = ?, lease_until = NULL, lease_owner = NULL
      WHERE id = ? AND status = 'pending'`)
    this.#insertAttempt = db.prepare(
      'INSERT INTO attempts (delivery_id, at, url, status, error, ms) VALUES (?, ?, ?, ?, ?, ?)',
    )
    this.#retry = db.prepare(`
      UPDATE deliveries SET status = 'pending', attempts = 0, first_attempt_at = NULL, next_attempt_at = ?, updated_at = ?,
        lease_until = NULL, lease_owner = NULL
      WHERE id = ? AND status = 'failed'`)
    this.#statusOf = db.prepare('SELECT status FROM deliveries WHERE id = ?').pluck()
    this.#list = db.prepare(`
      SELECT * FROM deliveries
      WHERE id > @after AND (@status IS NULL OR status = @status) AND (@source IS NULL OR source = @source)
      ORDER BY id LIMIT @limit`)
    this.#backlog = db.prepare(`
      SELECT source, status, count(*) AS count, min(created_at) AS oldestCreatedAt FROM deliveries
      WHERE status IN ('pending', 'failed') GROUP BY source, status ORDER BY source, status`)
    this.#members = db.prepare('SELECT user_id FROM audience_members WHERE source = ? AND audience = ?').pluck()
    this.#addMember = db.prepare('INSERT INTO audience_members (source, audience, user_id) VALUES (?, ?, ?)')
    this.#removeMember = db.prepare('DELETE FROM audience_members WHERE source = ? AND audience = ? AND user_id = ?')

    this.#enqueueAll = db.transaction((deliveries: readonly NewDelivery[]) => {
      const now = this.#now()
      let inserted = 0
      for (const d of deliveries) {
        inserted += this.#insert.run(d.source, d.destination, d.messageId, d.type, d.json, now, now, now).changes
      }
      return inserted
    })
    this.#recordAll = db.transaction((outcomes: readonly AttemptOutcome[]) => {
      const now = this.#now()
      for (const o of outcomes) {
        const [nextAt, error] =
          o.next.status === 'pending'
            ? [o.next.nextAttemptAt, o.next.error]
            : [now, o.next.status === 'failed' ? o.next.error : null]
        this.#update.run(o.next.status, o.at, nextAt, error, now, o.id)
        for (const r of o.requests) {
          this.#insertAttempt.run(o.id, o.at, r.url, r.status ?? null, r.error ?? null, Math.round(r.ms))
        }
      }
    })
    this.#claimAll = db.transaction((request: ClaimRequest) => {
      const rows = this.#claim.all(request) as (DeliveryRow & { next_attempt_at: number })[]
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
    })
    this.#syncAll = db.transaction(
      (
        source: string,
        audience: string,
        userIds: readonly string[],
        announce: (change: AudienceChange) => NewDelivery[],
      ) => {
        const current = new Set(this.#members.all(source, audience) as string[])
        const wanted = new Set(userIds)
        const change = {
          added: [...wanted].filter((id) => !current.has(id)),
          removed: [...current].filter((id) => !wanted.has(id)),
        }
        for (const id of change.added) this.#addMember.run(source, audience, id)
        for (const id of change.removed) this.#removeMember.run(source, audience, id)
        this.#enqueueAll(announce(change))
        return change
      },
    )
    this.#pruneAll = db.transaction((before: number, limit: number) => {
      const ids = this.#statements
        .get(`SELECT id FROM deliveries WHERE status = 'delivered' AND updated_at < ? ORDER BY updated_at LIMIT ?`)
        .pluck()
        .all(before, limit) as number[]
      if (ids.length === 0) return 0
      const placeholders = ids.map(() => '?').join(',')
      this.#statements.get(`DELETE FROM attempts WHERE delivery_id IN (${placeholders})`).run(...ids)
      return this.#statements.get(`DELETE FROM deliveries WHERE id IN (${placeholders})`).run(...ids).changes
    })
  }

  async enqueue(deliveries: readonly NewDelivery[]): Promise<number> {
    return deliveries.length === 0 ? 0 : this.#enqueueAll(deliveries)
  }

  async claim(request: ClaimRequest): Promise<DueDelivery[]> {
    return request.limit <= 0 ? [] : this.#claimAll(request)
  }

  async renew(owner: string, ids: readonly number[], leaseUntil: number): Promise<void> {
    if (ids.length === 0) return
    this.#forIds(ids, 'UPDATE deliveries SET lease_until = ? WHERE lease_owner = ? AND id IN', [leaseUntil, owner])
  }

  async release(owner: string, ids: readonly number[]): Promise<void> {
    if (ids.length === 0) return
    this.#forIds(ids, 'UPDATE deliveries SET lease_until = NULL, lease_owner = NULL WHERE lease_owner = ? AND id IN', [
      owner,
    ])
  }

  async nextDueAt(source: string, now: number): Promise<number | undefined> {
    const row = this.#nextDue.get(source, now) as { at: number | null }
    return row.at ?? undefined
  }

  /**
   * Without waiting for the disk (`synchronous = NORMAL`): the commit survives a crash of the
   * process, and if a power cut loses it, the deliveries are pending again and sent again —
   * at-least-once holds, while acknowledged messages (written by {@link enqueue}) always wait for
   * the disk.
   */
  async record(outcomes: readonly AttemptOutcome[]): Promise<void> {
    if (outcomes.length === 0) return
    this.db.pragma('synchronous = NORMAL')
    try {
      this.#recordAll(outcomes)
    } finally {
      this.db.pragma('synchronous = FULL')
    }
  }

  async failUnconfiguredSources(configured: readonly string[]): Promise<number> {
    const now = this.#now()
    const placeholders = configured.map(() => '?').join(',')
    return this.#statements
      .get(`
        UPDATE deliveries SET status = 'failed', last_error = 'source "' || source || '" is no longer configured', updated_at = ?
        WHERE status = 'pending'${configured.length === 0 ? '' : ` AND source NOT IN (${placeholders})`}`)
      .run(now, ...configured).changes
  }

  async retry(id: number): Promise<'retried' | 'not-found' | 'not-failed'> {
    const now = this.#now()
    if (this.#retry.run(now, now, id).changes === 1) return 'retried'
    return this.#statusOf.get(id) === undefined ? 'not-found' : 'not-failed'
  }

  async list(query: DeliveryQuery): Promise<DeliveryView[]> {
    const rows = this.#list.all({
      after: query.after,
      limit: query.limit,
      status: query.status ?? null,
      source: query.source ?? null,
    }) as DeliveryRow[]
    if (rows.length === 0) return []
    const placeholders = rows.map(() => '?').join(',')
    const attempts = this.#statements
      .get(
        `SELECT delivery_id, at, url, status, error, ms FROM attempts WHERE delivery_id IN (${placeholders}) ORDER BY id`,
      )
      .all(...rows.map((r) => r.id)) as AttemptRow[]
    return toDeliveryViews(rows, attempts)
  }

  async syncAudience(
    source: string,
    audience: string,
    userIds: readonly string[],
    announce: (change: AudienceChange) => NewDelivery[],
  ): Promise<AudienceChange> {
    // [relay-workers] IMMEDIATE: this transaction reads before it writes, and a deferred one that
    // must upgrade while another process writes fails with SQLITE_BUSY without waiting.
    return this.#syncAll.immediate(source, audience, userIds, announce)
  }

  async prune(before: number, limit: number): Promise<number> {
    // [relay-workers] IMMEDIATE, as in syncAudience: it reads before it writes.
    return this.#pruneAll.immediate(before, limit)
  }

  async backlog(): Promise<BacklogRow[]> {
    return this.#backlog.all() as BacklogRow[]
  }

  async close(): Promise<void> {
    if (this.#closed) return
    this.#closed = true
    this.db.close()
  }

  // Runs `sql` (ending in `id IN`) over `ids` in chunks within SQLite's limit on bound parameters.
  #forIds(ids: readonly number[], sql: string, params: readonly unknown[]): void {
    for (let start = 0; start < ids.length; start += 500) {
      const chunk = ids.slice(start, start + 500)
      this.#statements.get(`${sql} (${chunk.map(() => '?').join(',')})`).run(...params, ...chunk)
    }
  }
}
