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
import {
  DEFAULT_POOL_SETTINGS,
  databaseError,
  openPool,
  type PgLoader,
  type PoolSettings,
  type PostgresPool,
  transaction,
} from '../../kit/postgres/pool'
import { endpointViews } from './endpoint-views'
import { PostgresCircuits } from './postgres-circuits'
import { PostgresReplays } from './postgres-replays'
import { PostgresAlertClaims } from './postgres-alert-claims'
import { PostgresSessions } from './postgres-sessions'
import { PostgresSourceConfigs } from './postgres-source-configs'
import { PostgresViolations } from './postgres-violations'
import { PostgresSuppressions } from './suppressions'
import { PostgresEndpointLimits } from './endpoint-limits'
import { makeDaysAhead, pruneSettled } from './partitions'
import { prepareAttemptsByDay } from './prepare-attempts'
import { prepareMessageKey } from './prepare-message-key'
import { prepareOrderIndex } from './prepare-order-index'
import { PostgresOrdering } from './ordering'
import { migrate } from './schema'
import { copyToSchema6Online } from './upgrade6'
import { filterValues, POSTGRES_STATEMENTS as SQL } from './statements'
import { prepared } from './prepared'
import { insertDeliveries } from './insert-deliveries'
import { SPILL } from './delivery-blocks'

/** Options of {@link openPostgresStore}, for tests and the bench. */
export interface PostgresStoreOptions {
  /** The relay's clock, epoch ms: the clock of the times callers pass and are given. */
  now?: () => number
  /**
   * Tests only: an instant standing in for the database's clock, which otherwise judges and writes
   * every lease and due time (so a test can move both clocks together, or shift only the relay's).
   */
  databaseNow?: () => number
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
    await copyToSchema6Online(pool)
    await prepareAttemptsByDay(pool)
    await prepareMessageKey(pool)
    await prepareOrderIndex(pool)
    await migrate(pool)
    await makeDaysAhead(pool, options.databaseNow?.() ?? Date.now())
  } catch (error) {
    await pool.end().catch(() => {})
    throw databaseError(url, 'prepare', error)
  }
  return new PostgresStore(pool, options)
}

/**
 * The {@link Store} on PostgreSQL (`pg`), shared by any number of relays, on schema 6
 * (`./schema6.ts`). Each method is one statement (one round trip, its own transaction; all in
 * `./statements.ts`) but enqueue (one statement, a function that takes the messages' locks, then
 * inserts, in a transaction of its own: its COMMIT reports a standby that did not confirm), an
 * audience sync (one transaction on one connection) and prune (days, then rows: `./partitions.ts`).
 */
export class PostgresStore implements Store {
  readonly kind = 'postgres'
  readonly circuits: Store['circuits']
  readonly sessions: Store['sessions']
  readonly replays: Store['replays']
  readonly sourceConfigs: Store['sourceConfigs']
  readonly alertClaims: Store['alertClaims']
  readonly violations: Store['violations']
  readonly suppressions: Store['suppressions']
  readonly endpointLimits: Store['endpointLimits']
  readonly ordering: Store['ordering']
  /** The connection pool, this store's alone (its circuits share it). */
  readonly #pool: PostgresPool
  /** The relay's clock: the clock of the times callers pass and are given. */
  readonly #now: () => number
  /** A test's stand-in for the database's clock; `undefined`: the database's own (`now()`). */
  readonly #databaseNow: (() => number) | undefined
  #closed: Promise<void> | undefined
  /** The cut-off of the last prune, whose whole days are gone. */
  #daysDroppedBefore: number | undefined

  /** A store over `pool`, which it owns from now on (and ends). */
  constructor(pool: PostgresPool, options: Pick<PostgresStoreOptions, 'now' | 'databaseNow'> = {}) {
    this.#pool = pool
    this.#now = options.now ?? Date.now
    this.#databaseNow = options.databaseNow
    this.circuits = new PostgresCircuits(pool, options)
    this.sessions = new PostgresSessions(pool)
    this.replays = new PostgresReplays(pool, options)
    this.sourceConfigs = new PostgresSourceConfigs(pool)
    this.alertClaims = new PostgresAlertClaims(pool)
    this.violations = new PostgresViolations(pool)
    this.suppressions = new PostgresSuppressions(pool)
    this.endpointLimits = new PostgresEndpointLimits(pool, options)
    this.ordering = new PostgresOrdering(pool)
  }

  // The statements' clock parameter: null, so they read the database's clock, unless a test stands in for it.
  #clock(): number | null {
    return this.#databaseNow?.() ?? null
  }

  async enqueue(deliveries: readonly NewDelivery[]): Promise<number> {
    if (deliveries.length === 0) return 0
    // In a transaction of its own (not the statement's implicit one): its COMMIT is where a
    // synchronous standby's missing confirmation is heard (./pool.ts), before the 2xx.
    return transaction(this.#pool, (client) => insertDeliveries(client, deliveries, this.#clock()))
  }

  async claim(request: ClaimRequest): Promise<DueDelivery[]> {
    if (request.limit <= 0) return []
    const { rows } = await this.#pool.query<ClaimedRow & { clock_now: number }>(
      prepared('claim', [request.source, this.#clock(), request.limit, request.owner, request.leaseMs]),
    )
    const now = this.#now()
    // first_attempt_at is on the database's clock; the worker judges the retry window on its own:
    // given as that long before the relay's now, the window's length stays the database's.
    const offset = rows[0] === undefined ? 0 : rows[0].clock_now - now
    const due = toDueDeliveries(rows)
    for (const d of due) if (d.firstAttemptAt !== undefined) d.firstAttemptAt -= offset
    return due
  }

  async renew(owner: string, ids: readonly number[], leaseMs: number): Promise<void> {
    if (ids.length === 0) return
    await this.#pool.query(prepared('renew', [owner, ids, leaseMs, this.#clock()]))
  }

  async release(owner: string, ids: readonly number[]): Promise<void> {
    if (ids.length === 0) return
    // Released one by one while the rest of their blocks may be in flight (./delivery-blocks.ts).
    await this.#pool.query(SPILL.ofIds, [ids])
    await this.#pool.query(prepared('release', [owner, ids]))
  }

  async nextDueIn(source: string): Promise<number | undefined> {
    const { rows } = await this.#pool.query<{ wait: number | null }>(prepared('nextDue', [source, this.#clock()]))
    return rows[0]?.wait ?? undefined
  }

  async record(outcomes: readonly AttemptOutcome[]): Promise<void> {
    if (outcomes.length === 0) return
    const now = this.#now()
    const ids: number[] = []
    const statuses: string[] = []
    // Durations from the relay's now, which the statement adds to the database's: only the
    // relay's clock's rate matters, never where it stands.
    const agos: number[] = []
    const dueIns: number[] = []
    const errors: (string | null)[] = []
    const attemptIds: number[] = []
    const attemptAgos: number[] = []
    const urls: string[] = []
    const httpStatuses: (number | null)[] = []
    const requestErrors: (string | null)[] = []
    const durations: number[] = []
    const responseBodies: (string | null)[] = []
    const requestHeaders: (string | null)[] = []
    const consoles: (string | null)[] = []
    for (const o of outcomes) {
      const { status, nextAttemptAt, error } = outcomeColumns(o, now)
      ids.push(o.id)
      statuses.push(status)
      agos.push(Math.round(now - o.at))
      dueIns.push(Math.round(nextAttemptAt - now))
      errors.push(error)
      for (const r of o.requests) {
        attemptIds.push(o.id)
        attemptAgos.push(Math.round(now - o.at))
        urls.push(r.url)
        httpStatuses.push(r.status ?? null)
        requestErrors.push(r.error ?? null)
        durations.push(Math.round(r.ms))
        const details = requestDetails(r)
        responseBodies.push(details.responseBody)
        requestHeaders.push(details.requestHeaders)
        consoles.push(details.console)
      }
    }
    await this.#pool.query(
      prepared('record', [
        ids,
        statuses,
        agos,
        dueIns,
        errors,
        this.#clock(),
        attemptIds,
        attemptAgos,
        urls,
        httpStatuses,
        requestErrors,
        durations,
        responseBodies,
        requestHeaders,
        consoles,
      ]),
    )
  }

  async failUnconfiguredSources(configured: readonly string[]): Promise<number> {
    await this.#pool.query(SPILL.ofOtherSources, [configured])
    const { rowCount } = await this.#pool.query(SQL.failUnconfigured, [this.#now(), configured])
    return rowCount ?? 0
  }

  async retry(id: number): Promise<'retried' | 'not-found' | 'not-failed'> {
    const { rows } = await this.#pool.query<{ status: string; retried: boolean }>(SQL.retry, [id, this.#now()])
    const row = rows[0]
    if (row === undefined) return 'not-found'
    return row.retried ? 'retried' : 'not-failed'
  }

  async get(id: number): Promise<DeliveryView | undefined> {
    const { rows } = await this.#pool.query<DeliveryRow>(SQL.get, [id])
    return (await this.#withAttempts(rows))[0]
  }

  async list(query: DeliveryQuery): Promise<DeliveryView[]> {
    const { rows } = await this.#pool.query<DeliveryRow>(SQL.list, [
      query.after,
      query.status ?? null,
      query.source ?? null,
      query.limit,
    ])
    return this.#withAttempts(rows)
  }

  async listNewest(query: NewestQuery): Promise<DeliveryView[]> {
    const { before, limit, ...filter } = query
    const fields = filterFields(filter)
    const values = [...filterValues(fields, filter), ...(before === undefined ? [] : [before]), limit]
    const { rows } = await this.#pool.query<DeliveryRow>(SQL.listNewest(fields, before !== undefined), values)
    return this.#withAttempts(rows)
  }

  find(query: FindQuery): Promise<DeliveryPage> {
    return findPage(query, (newest) => this.listNewest(newest))
  }

  async retryMatching(filter: DeliveryFilter, options: { dryRun?: boolean } = {}): Promise<RetryMatchingResult> {
    const rest = deadLetterFilter(filter)
    if (rest === undefined) return nothingMatched(options.dryRun)
    const fields = filterFields(rest)
    const values = filterValues(fields, rest)
    const last = await this.#pool.query<{ id: number }>(SQL.lastId)
    let upTo = Number(last.rows[0]?.id ?? 0)
    const counted = await this.#pool.query<{ count: number }>(SQL.countDeadLetters(fields), [upTo, ...values])
    const matched = Number(counted.rows[0]?.count ?? 0)
    if (options.dryRun) return { matched }
    let retried = 0
    for (;;) {
      const { rows } = await this.#pool.query<{ picked: number; low: number | null; retried: number }>(
        SQL.retryMatching(fields),
        [upTo, REPLAY_CHUNK, this.#now(), ...values],
      )
      const chunk = rows[0]!
      retried += Number(chunk.retried)
      if (Number(chunk.picked) < REPLAY_CHUNK || chunk.low === null) return { matched, retried }
      upTo = Number(chunk.low) - 1
    }
  }

  endpoints(query: EndpointQuery): Promise<EndpointView[]> {
    return endpointViews(this.#pool, this.circuits, query)
  }

  async syncAudience(
    source: string,
    audience: string,
    userIds: readonly string[],
    announce: (change: AudienceChange) => NewDelivery[],
  ): Promise<AudienceChange> {
    return transaction(this.#pool, async (client) => {
      // Two relays syncing the same audience at once take turns: each compares with the
      // memberships the other committed, so no join or leave is announced twice or lost.
      await client.query(SQL.lockAudience, [`tracklet:audience:${JSON.stringify([source, audience])}`])
      const { rows } = await client.query<{ user_id: string }>(SQL.members, [source, audience])
      const change = audienceChange(
        rows.map((r) => r.user_id),
        userIds,
      )
      if (change.added.length > 0) await client.query(SQL.addMembers, [source, audience, change.added])
      if (change.removed.length > 0) await client.query(SQL.removeMembers, [source, audience, change.removed])
      const deliveries = announce(change)
      if (deliveries.length > 0) await insertDeliveries(client, deliveries, this.#clock())
      return change
    })
  }

  // Retention (./partitions.ts): whole days once per cut-off (a sweep calls again with the same
  // one while a chunk comes back full), then settled rows no dropped day took.
  async prune(before: number, limit: number): Promise<number> {
    const days = before !== this.#daysDroppedBefore
    this.#daysDroppedBefore = before
    // What retention reads as pending is what the queue names: a block left this long is spilled.
    await this.#pool.query(SPILL.before, [before])
    return pruneSettled(this.#pool, { before, limit, now: await this.databaseNow(), days }, async () => {
      const { rows } = await this.#pool.query<{ count: number }>(prepared('prune', [before, limit]))
      return rows[0]?.count ?? 0
    })
  }

  async backlog(): Promise<BacklogRow[]> {
    const { rows } = await this.#pool.query<BacklogRow>(SQL.backlog)
    return rows
  }

  async databaseNow(): Promise<number> {
    if (this.#databaseNow !== undefined) return this.#databaseNow()
    const { rows } = await this.#pool.query<{ now: number }>(SQL.databaseNow)
    return rows[0]!.now
  }

  /** Ends every connection, waiting for queries under way. Idempotent. */
  close(): Promise<void> {
    this.#closed ??= this.#pool.end()
    return this.#closed
  }

  // The rows as the delivery log shows them, each with its attempts.
  async #withAttempts(rows: DeliveryRow[]): Promise<DeliveryView[]> {
    if (rows.length === 0) return []
    const attempts = await this.#pool.query<AttemptRow>(SQL.attemptsOf, [rows.map((r) => r.id)])
    return toDeliveryViews(rows, attempts.rows)
  }
}
