import type { Transaction } from 'better-sqlite3'
import type { CircuitStore } from '../circuits'
import type { ReplayStore } from '../replays'
import type { AlertClaimStore } from '../alert-claims'
import type { SessionStore } from '../sessions'
import {
  type AttemptRow,
  audienceChange,
  type ClaimedRow,
  type DeliveryRow,
  outcomeColumns,
  REPLAY_CHUNK,
  requestDetails,
  toDeliveryViews,
  toDueDeliveries,
} from '../rows'
import type {
  AttemptOutcome,
  AudienceChange,
  BacklogRow,
  ClaimRequest,
  DeliveryFilter,
  DeliveryPage,
  DeliveryQuery,
  DeliveryView,
  FindQuery,
  DueDelivery,
  NewDelivery,
  NewestQuery,
  RetryMatchingResult,
  Store,
} from '../store'
import type { EndpointQuery, EndpointView } from '../endpoints'
import { deadLetterFilter, filterFields, findPage, nothingMatched } from '../filter'
import { openSqliteDatabase, type SqliteDatabase } from './schema'
import { SqliteCircuits } from './sqlite-circuits'
import { SqliteReplays } from './sqlite-replays'
import { SqliteAlertClaims } from './sqlite-alert-claims'
import { SqliteSessions } from './sqlite-sessions'
import { SqliteSourceConfigs } from './sqlite-source-configs'
import type { SourceConfigStore } from '../source-configs'
import { SqliteViolations } from './sqlite-violations'
import { SqliteSuppressions } from './suppressions'
import { SqliteEndpointLimits } from './endpoint-limits'
import { SqliteOrdering } from './ordering'
import { sqliteEndpoints } from './sqlite-endpoints'
import type { NewViolation } from '../violations'
import { StatementCache } from './statement-cache'
import { WalSync } from './wal-sync'
import { WalCheckpointer } from './wal-checkpointer'
import { type EnqueueTransaction, enqueueTransaction, NEVER, NONE } from './enqueue'
import { filterParams, SQLITE_CHUNK, SQLITE_STATEMENTS as SQL, withoutWaitingForDisk } from './statements'

/**
 * Opens the SQLite store at `path` (a file, created when missing, or `':memory:'`). One SQLite
 * file serves one relay: leases left by a relay that died are void at once when it starts again.
 *
 * @throws {RelayError} `ERR_RELAY_DATABASE` or `ERR_RELAY_DRIVER_MISSING`.
 */
export async function openSqliteStore(
  path: string,
  now: () => number = Date.now,
  options: { sharedByProcesses?: boolean } = {},
): Promise<SqliteStore> {
  return new SqliteStore(await openSqliteDatabase(path), now, options)
}

/**
 * The {@link Store} on SQLite (better-sqlite3, WAL; ingest waits for the disk: {@link enqueue}). The driver is
 * synchronous: each method does its work at once, in one transaction, and returns a settled
 * promise. Statements (all in `./statements.ts`) are prepared once.
 */
export class SqliteStore implements Store {
  readonly kind = 'sqlite'
  readonly circuits: CircuitStore
  readonly sessions: SessionStore
  readonly replays: ReplayStore
  readonly sourceConfigs: SourceConfigStore
  readonly alertClaims: AlertClaimStore
  readonly violations: SqliteViolations
  readonly suppressions: SqliteSuppressions
  readonly endpointLimits: SqliteEndpointLimits
  readonly ordering: SqliteOrdering
  /** The database, this store's alone. */
  readonly #db: SqliteDatabase
  /** The time source, epoch ms (injectable so retry windows can be tested without waiting). */
  readonly #now: () => number
  /** The prepared statements, by text. */
  readonly #sql: StatementCache
  readonly #enqueueAll: EnqueueTransaction
  readonly #recordAll: (outcomes: readonly AttemptOutcome[]) => void
  readonly #claimAll: (request: ClaimRequest) => DueDelivery[]
  readonly #syncAll: Transaction<
    (
      source: string,
      audience: string,
      userIds: readonly string[],
      announce: (change: AudienceChange) => NewDelivery[],
    ) => AudienceChange
  >
  readonly #pruneAll: Transaction<(before: number, limit: number) => number>
  /** Flushes enqueue's commits off the event loop; `undefined` where there is no WAL file to flush. */
  readonly #walSync: WalSync | undefined
  readonly #checkpoints: WalCheckpointer | undefined
  #closed = false

  /**
   * A store over `db`, which it owns from now on (and closes). `sharedByProcesses`: other
   * processes use the file at once (`tracklet relay --workers N`), so the leases and probes
   * standing are theirs and are left to run out; otherwise they are this relay's previous run's.
   */
  constructor(db: SqliteDatabase, now: () => number = Date.now, { sharedByProcesses = false } = {}) {
    this.#db = db
    this.#now = now
    const sql = new StatementCache(db)
    this.#sql = sql
    if (!sharedByProcesses) sql.get(SQL.voidLeases).run()
    this.#walSync = WalSync.open(db)
    this.#checkpoints = WalCheckpointer.for(db)
    this.circuits = new SqliteCircuits(sql, now, { sharedByProcesses })
    this.sessions = new SqliteSessions(sql)
    this.replays = new SqliteReplays(sql, now)
    this.sourceConfigs = new SqliteSourceConfigs(sql)
    this.alertClaims = new SqliteAlertClaims(sql)
    this.violations = new SqliteViolations(sql)
    this.suppressions = new SqliteSuppressions(sql)
    this.endpointLimits = new SqliteEndpointLimits(sql, now)
    this.ordering = new SqliteOrdering(sql)

    this.#enqueueAll = enqueueTransaction(sql, this.violations, now)
    this.#recordAll = db.transaction((outcomes: readonly AttemptOutcome[]) => {
      const now = this.#now()
      const update = sql.get(SQL.record)
      const insertAttempt = sql.get(SQL.recordAttempt)
      for (const o of outcomes) {
        const { status, nextAttemptAt, error } = outcomeColumns(o, now)
        update.run(status, o.at, nextAttemptAt, error, now, o.id)
        for (const r of o.requests) {
          const { responseBody, requestHeaders, console } = requestDetails(r)
          insertAttempt.run(
            o.id,
            o.at,
            r.url,
            r.status ?? null,
            r.error ?? null,
            Math.round(r.ms),
            responseBody,
            requestHeaders,
            console,
          )
        }
      }
    })
    this.#claimAll = db.transaction(({ source, limit, owner, leaseMs }: ClaimRequest) => {
      // One file, one machine: the process's clock is the only one, judging and writing leases.
      const now = this.#now()
      const rows = sql.get(SQL.claim).all({ source, limit, owner, now, leaseUntil: now + leaseMs }) as ClaimedRow[]
      return toDueDeliveries(rows)
    })
    this.#syncAll = db.transaction(
      (
        source: string,
        audience: string,
        userIds: readonly string[],
        announce: (change: AudienceChange) => NewDelivery[],
      ) => {
        const change = audienceChange(sql.get(SQL.members).pluck().all(source, audience) as string[], userIds)
        for (const id of change.added) sql.get(SQL.addMembers).run(source, audience, id)
        for (const id of change.removed) sql.get(SQL.removeMembers).run(source, audience, id)
        this.#enqueueAll(announce(change))
        return change
      },
    )
    this.#pruneAll = db.transaction((before: number, limit: number) => {
      const ids = sql.get(SQL.prune).pluck().all(before, limit) as number[]
      if (ids.length === 0) return 0
      sql.get(SQL.pruneAttempts(ids.length)).run(...ids)
      return sql.get(SQL.pruneDeliveries(ids.length)).run(...ids).changes
    })
  }

  /**
   * Resolves once the deliveries are on disk. The commit itself does not wait for the disk; the
   * flush of the WAL that follows waits off the event loop ({@link WalSync}), so the relay goes on
   * reading requests meanwhile. Without a WAL file, the commit waits (`synchronous = FULL`).
   */
  async enqueue(deliveries: readonly NewDelivery[]): Promise<number> {
    return this.enqueueWithViolations(deliveries, NONE, NEVER)
  }

  /**
   * {@link enqueue} with the violations tracking plans found in those messages, in the same
   * transaction: one commit, one flush of the WAL. Should their insert fail, they alone are rolled
   * back (a savepoint of their own) and `unrecorded` is told; the deliveries commit all the same.
   */
  async enqueueWithViolations(
    deliveries: readonly NewDelivery[],
    violations: readonly NewViolation[],
    unrecorded: (error: Error) => void,
  ): Promise<number> {
    if (deliveries.length === 0 && violations.length === 0) return 0
    const wal = this.#walSync
    if (wal === undefined) return this.#enqueueAll(deliveries, violations, unrecorded)
    const inserted = this.#withoutWaitingForDisk(() => this.#enqueueAll(deliveries, violations, unrecorded))
    this.#checkpoints?.committed(deliveries.length)
    await wal.durable()
    return inserted
  }

  /**
   * Without waiting for the disk, as {@link record}: a claim a power cut loses is a lease that
   * never was, and the deliveries it took are pending and due as before, so they are claimed
   * again. Nothing the relay acknowledged depends on it.
   */
  async claim(request: ClaimRequest): Promise<DueDelivery[]> {
    return request.limit <= 0 ? [] : this.#withoutWaitingForDisk(() => this.#claimAll(request))
  }

  async renew(owner: string, ids: readonly number[], leaseMs: number): Promise<void> {
    this.#forIds(ids, SQL.renew, [this.#now() + leaseMs, owner])
  }

  async release(owner: string, ids: readonly number[]): Promise<void> {
    this.#forIds(ids, SQL.release, [owner])
  }

  async nextDueIn(source: string): Promise<number | undefined> {
    const row = this.#sql.get(SQL.nextDue).get(source) as { at: number | null }
    return row.at === null ? undefined : row.at - this.#now()
  }

  async databaseNow(): Promise<number> {
    return this.#now()
  }

  /**
   * Without waiting for the disk (`synchronous = NORMAL`): the commit survives a crash of the
   * process, and if a power cut loses it, the deliveries are pending again and sent again —
   * at-least-once holds, while acknowledged messages (written by {@link enqueue}) always wait for
   * the disk.
   */
  async record(outcomes: readonly AttemptOutcome[]): Promise<void> {
    if (outcomes.length === 0) return
    this.#withoutWaitingForDisk(() => this.#recordAll(outcomes))
  }

  // Runs `write` (one transaction) with `synchronous = NORMAL`: no flush (a power cut losing it
  // sends deliveries again, or enqueue's caller waits for the WAL's); then asks for a checkpoint.
  #withoutWaitingForDisk<T>(write: () => T): T {
    try {
      return withoutWaitingForDisk(this.#sql, write)
    } finally {
      this.#checkpoints?.committed(0)
    }
  }

  async failUnconfiguredSources(configured: readonly string[]): Promise<number> {
    return this.#sql.get(SQL.failUnconfigured(configured.length)).run(this.#now(), ...configured).changes
  }

  async retry(id: number): Promise<'retried' | 'not-found' | 'not-failed'> {
    const now = this.#now()
    if (this.#sql.get(SQL.retry).run(now, now, id).changes === 1) return 'retried'
    return this.#sql.get(SQL.statusOf).pluck().get(id) === undefined ? 'not-found' : 'not-failed'
  }

  async get(id: number): Promise<DeliveryView | undefined> {
    const row = this.#sql.get(SQL.get).get(id) as DeliveryRow | undefined
    return row === undefined ? undefined : this.#withAttempts([row])[0]
  }

  async list(query: DeliveryQuery): Promise<DeliveryView[]> {
    const { after, limit, status = null, source = null } = query
    return this.#withAttempts(this.#sql.get(SQL.list).all({ after, limit, status, source }) as DeliveryRow[])
  }

  async listNewest(query: NewestQuery): Promise<DeliveryView[]> {
    const { before, limit, ...filter } = query
    const fields = filterFields(filter)
    const params = { ...filterParams(fields, filter), limit, ...(before === undefined ? {} : { before }) }
    const rows = this.#sql.get(SQL.listNewest(fields, before !== undefined, filter.status)).all(params) as DeliveryRow[]
    return this.#withAttempts(rows)
  }

  find(query: FindQuery): Promise<DeliveryPage> {
    return findPage(query, (newest) => this.listNewest(newest))
  }

  async retryMatching(filter: DeliveryFilter, options: { dryRun?: boolean } = {}): Promise<RetryMatchingResult> {
    const rest = deadLetterFilter(filter)
    if (rest === undefined) return nothingMatched(options.dryRun)
    const fields = filterFields(rest)
    const params = filterParams(fields, rest)
    let upTo = this.#sql.get(SQL.lastId).pluck().get() as number
    const matched = this.#sql
      .get(SQL.countDeadLetters(fields))
      .pluck()
      .get({ ...params, upTo }) as number
    if (options.dryRun) return { matched }
    let retried = 0
    for (;;) {
      const now = this.#now()
      const ids = this.#sql
        .get(SQL.retryMatching(fields))
        .pluck()
        .all({ ...params, upTo, now, chunk: REPLAY_CHUNK }) as number[]
      retried += ids.length
      if (ids.length < REPLAY_CHUNK) return { matched, retried }
      upTo = Math.min(...ids) - 1
      // One writer: let ingest and the worker write between two chunks.
      await new Promise((resolve) => setImmediate(resolve))
    }
  }

  async endpoints(query: EndpointQuery): Promise<EndpointView[]> {
    return sqliteEndpoints(this.#sql, this.circuits, query)
  }

  async syncAudience(
    source: string,
    audience: string,
    userIds: readonly string[],
    announce: (change: AudienceChange) => NewDelivery[],
  ): Promise<AudienceChange> {
    // IMMEDIATE: this transaction reads before it writes; a deferred one that must upgrade while
    // another process (--workers) writes fails with SQLITE_BUSY at once instead of waiting.
    return this.#syncAll.immediate(source, audience, userIds, announce)
  }

  async prune(before: number, limit: number): Promise<number> {
    // IMMEDIATE, as in syncAudience: it reads before it writes. Without waiting for the disk: a
    // prune a power cut loses is done again by the next sweep (docs/sqlite.md has the figures).
    return this.#withoutWaitingForDisk(() => this.#pruneAll.immediate(before, limit))
  }

  async backlog(): Promise<BacklogRow[]> {
    return this.#sql.get(SQL.backlog).all() as BacklogRow[]
  }

  async close(): Promise<void> {
    if (this.#closed) return
    this.#closed = true
    await this.#checkpoints?.close()
    await this.#walSync?.close()
    this.#db.close()
  }

  // The rows as the delivery log shows them, each with its attempts.
  #withAttempts(rows: DeliveryRow[]): DeliveryView[] {
    if (rows.length === 0) return []
    const ids = rows.map((r) => r.id)
    const attempts = this.#sql.get(SQL.attemptsOf(ids.length)).all(...ids) as AttemptRow[]
    return toDeliveryViews(rows, attempts)
  }

  // Runs a statement over `ids` (its parameters: `params`, then the ids) in chunks, within
  // SQLite's limit on bound parameters.
  #forIds(ids: readonly number[], sql: (ids: number) => string, params: readonly unknown[]): void {
    for (let start = 0; start < ids.length; start += SQLITE_CHUNK) {
      const chunk = ids.slice(start, start + SQLITE_CHUNK)
      this.#sql.get(sql(chunk.length)).run(...params, ...chunk)
    }
  }
}
