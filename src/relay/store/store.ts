import type { CircuitStore } from './circuits'
import type { AlertClaimStore } from './alert-claims'
import type { EndpointQuery, EndpointView } from './endpoints'
import type { ClaimRequest, DeliveryFilter, DeliveryStatus } from './delivery-query'
import type { DueDelivery } from './due-delivery'
import type { ReplayStore } from './replays'
import type { SessionStore } from './sessions'
import type { SourceConfigStore } from './source-configs'
import type { SuppressionStore } from './suppressions'
import type { EndpointLimitStore } from './endpoint-limits'
import type { NewViolation, ViolationStore } from './violations'
import type { OrderingStore } from './ordering/ordering-store'

export type { ClaimRequest, DeliveryFilter, DeliveryStatus, DueDelivery }

/**
 * The relay's durable state behind one interface: the outbox (deliveries and their attempts) and
 * audience memberships. Two implementations keep the same behaviour: SQLite (one relay, one file,
 * the embedded default) and PostgreSQL (any number of relays sharing one database).
 *
 * Every method that writes runs one transaction: a batch of deliveries, of outcomes or an
 * audience sync is committed whole or not at all. Every method may reject when the database
 * cannot be reached or written; callers decide what that means (ingest answers 503, the worker
 * writes again later).
 */
export interface Store {
  /** Which implementation this is, for logs and metrics. */
  readonly kind: 'sqlite' | 'postgres'

  /**
   * The circuits of the webhook URLs, kept in the same database (so every relay sharing it shares
   * them). Their writes are the circuit breaker's, not the outbox's.
   */
  readonly circuits: CircuitStore

  /**
   * The operator page's sessions, kept in the same database (so every relay and every worker on
   * it honours a sign-in made through any of them, and a sign-out ends it for all).
   */
  readonly sessions: SessionStore

  /** Replays (docs/replay.md): new deliveries of stored messages, paced across every relay on the store. */
  readonly replays: ReplayStore
  /** Sources created through the admin API, their write keys and the audit log, shared by every relay on the store. */
  readonly sourceConfigs: SourceConfigStore
  /** Who sends each endpoint's next `delivery.failed` alert, agreed by every relay on the store. */
  readonly alertClaims: AlertClaimStore
  /** The violations of tracking plans (docs/plans.md), kept in the same database. */
  readonly violations: ViolationStore
  /** The suppressed users (docs/privacy.md), shared by every relay on the store. */
  readonly suppressions: SuppressionStore
  /** The per-URL limits' shared budget (docs/delivery-controls.md), in the same database. */
  readonly endpointLimits: EndpointLimitStore
  /** What waits for ordered delivery per user (docs/delivery-controls.md, "Ordering"); the rule is in the claims. */
  readonly ordering: OrderingStore

  /**
   * Writes deliveries in one transaction, due at once. A delivery whose message id the source
   * already sent to that destination is skipped (the client sent the same batch again).
   * Resolves, with how many were new, only once they are durable.
   */
  enqueue(deliveries: readonly NewDelivery[]): Promise<number>

  /**
   * {@link enqueue} with the violations tracking plans found in those messages, in the same
   * transaction, where the store can (SQLite; absent elsewhere: ingest records them right after).
   * Should their insert fail, they alone are rolled back and `unrecorded` is told.
   */
  enqueueWithViolations?(
    deliveries: readonly NewDelivery[],
    violations: readonly NewViolation[],
    unrecorded: (error: Error) => void,
  ): Promise<number>

  /**
   * Claims up to `limit` of the source's deliveries that are due now and not leased by anyone,
   * oldest due first, leasing them to `owner` for `leaseMs`. Until the lease runs out (or the
   * outcome is recorded, or the lease is released), no other claim returns them: two relays never
   * attempt the same delivery while both are healthy.
   *
   * "Now" is the store's clock: on PostgreSQL the database's, which every relay sharing it reads
   * alike, so a relay whose own clock is off neither takes another's live lease nor holds its own
   * too long. That is why leases and delays travel as durations, never as instants.
   */
  claim(request: ClaimRequest): Promise<DueDelivery[]>

  /** Extends `owner`'s leases on `ids` (attempts still in flight) to `leaseMs` from now (the store's clock). */
  renew(owner: string, ids: readonly number[], leaseMs: number): Promise<void>

  /** Gives up `owner`'s leases on `ids` without an attempt: they are due again at once, for anyone. */
  release(owner: string, ids: readonly number[]): Promise<void>

  /**
   * How long until the source's next pending delivery becomes claimable, ms by the store's clock:
   * its due time, or the end of the lease holding it, whichever is later. 0 or less when one is
   * claimable already (it became due since the last claim); `undefined` when none is pending.
   */
  nextDueIn(source: string): Promise<number | undefined>

  /**
   * Writes the outcomes of attempts, with every request made, in one transaction, and ends their
   * leases. An outcome for a delivery that is no longer pending (recorded already by a relay whose
   * lease ran out) only adds its requests to the log.
   *
   * An outcome's times (`at`, `nextAttemptAt`) are on the caller's clock (the `now` the store was
   * opened with): the store writes them as that far from its own clock's now, so on PostgreSQL a
   * retry's delay and the retry window's start are the database's, whatever the relay's clock says.
   */
  record(outcomes: readonly AttemptOutcome[]): Promise<void>

  /**
   * Dead-letters the pending deliveries of every source not in `configured` (renamed or removed
   * since they were written): no worker lane would ever take them. Returns how many there were.
   */
  failUnconfiguredSources(configured: readonly string[]): Promise<number>

  /** Puts a dead-lettered delivery back in the queue with a fresh retry window, due at once. */
  retry(id: number): Promise<'retried' | 'not-found' | 'not-failed'>

  /** One delivery of the log with its attempts, or `undefined` when there is none with that id. */
  get(id: number): Promise<DeliveryView | undefined>

  /** A page of the delivery log, by id, after the id `after`, with each delivery's attempts. */
  list(query: DeliveryQuery): Promise<DeliveryView[]>

  /**
   * A page of the delivery log newest first (by id, below the id `before` when given), matching
   * the query's filter, with each delivery's attempts: what the operator page shows.
   */
  listNewest(query: NewestQuery): Promise<DeliveryView[]>

  /**
   * A page of the deliveries matching `query`'s filter, newest first, with each one's attempts,
   * and the opaque cursor of the next page (`undefined` on the last page).
   *
   * @throws {TypeError} when `query.cursor` is not a cursor this store gave.
   */
  find(query: FindQuery): Promise<DeliveryPage>

  /**
   * Counts the dead letters (status `failed`) the filter matches and, unless `dryRun`, puts each
   * back in the queue as {@link retry} does, a bounded chunk per statement so that even a
   * million-row replay never holds the outbox for long. Dead letters written after the call began
   * are left alone, so `retried` is at most `matched` (less only when some changed meanwhile).
   */
  retryMatching(filter: DeliveryFilter, options?: { dryRun?: boolean }): Promise<RetryMatchingResult>

  /**
   * What the operator's endpoints view shows of each webhook URL: its circuit (or pause), the
   * deliveries pending behind it, its requests of the last five minutes and their latency.
   */
  endpoints(query: EndpointQuery): Promise<EndpointView[]>

  /**
   * Makes `userIds` the audience's members for `source` and, in the same transaction, enqueues
   * the deliveries `announce` builds for the users who joined and who left. The first sync finds
   * no members, so every member has joined.
   */
  syncAudience(
    source: string,
    audience: string,
    userIds: readonly string[],
    announce: (change: AudienceChange) => NewDelivery[],
  ): Promise<AudienceChange>

  /**
   * Deletes delivered deliveries last updated before `before` (epoch ms), with their attempts, at
   * most `limit` of them. Dead-lettered and pending ones are never pruned. Returns how many went.
   */
  prune(before: number, limit: number): Promise<number>

  /**
   * How many deliveries wait, per source and status (`pending` and `failed` only: delivered ones
   * are history), and when the oldest of each was written (epoch ms). For metrics and the
   * operator page.
   */
  backlog(): Promise<BacklogRow[]>

  /**
   * The store's clock now, epoch ms: the database's on PostgreSQL (read at the server, so a relay
   * can measure its own clock's offset to the one its leases are judged by), the process's on
   * SQLite.
   */
  databaseNow(): Promise<number>

  /** Closes the connection(s). Idempotent. */
  close(): Promise<void>
}

/** One line of {@link Store.backlog}. */
export interface BacklogRow {
  source: string
  status: 'pending' | 'failed'
  count: number
  /** When the oldest of them was written, epoch ms. */
  oldestCreatedAt: number
}

/** The delivery statuses, for validating a filter. */
export const DELIVERY_STATUSES: readonly DeliveryStatus[] = ['pending', 'delivered', 'failed', 'filtered']

/** A delivery to write: one message for one destination of one source. */
export interface NewDelivery {
  source: string
  destination: string
  messageId: string
  type: string
  /** The message's JSON, serialised once at ingest. */
  json: string
  /**
   * The message's `userId` and `event` (`null` where it has none), kept for searching. Ingest gives
   * them, having the message at hand; when absent the store reads them from `json`.
   */
  searchKeys?: SearchKeys | undefined
  /**
   * The delivery's ordering key, for a destination that is ordered (docs/delivery-controls.md,
   * "Ordering"): the store's claims take a keyed delivery only once every earlier one with its key
   * is delivered, filtered or dead-lettered. Absent: not ordered.
   */
  orderKey?: string | undefined
}

/** What a delivery is found by, besides its ids: its message's `userId` and `event`. */
export interface SearchKeys {
  userId: string | null
  event: string | null
}

/** One HTTP request of an attempt, as the delivery log shows it. */
export interface RequestRecord {
  url: string
  status?: number
  error?: string
  ms: number
  /** The start of the receiver's answer to a failed request (at most `responseBodyLimit` bytes, as UTF-8). */
  responseBody?: string
  /** A failed request's headers, secrets hidden (signatures as `(present)`, configured values redacted). */
  requestHeaders?: Record<string, string>
  /** The `console` lines the destination's function printed during the attempt (docs/functions.md). */
  console?: readonly string[]
}

/** What the worker decided after one attempt: done, due again at `nextAttemptAt`, or dead-lettered. */
export type NextStep =
  | { status: 'delivered' }
  | { status: 'pending'; nextAttemptAt: number; error: string }
  | { status: 'failed'; error: string }
  /** Dropped by the destination's function (docs/functions.md): terminal, `error` says why. */
  | { status: 'filtered'; error: string }

/** What became of one attempt, written back by the worker. */
export interface AttemptOutcome {
  id: number
  /** When the attempt started, epoch ms. */
  at: number
  requests: readonly RequestRecord[]
  next: NextStep
  /** What the destination said of a delivered message (an archive's file): for observers, not stored. */
  detail?: Readonly<Record<string, unknown>>
}

/** A filter and page of the delivery log. */
export interface DeliveryQuery {
  status?: DeliveryStatus | undefined
  source?: string | undefined
  /** Only deliveries with an id above this one. */
  after: number
  limit: number
}

/** A filter and page of the delivery log, newest first. */
export interface NewestQuery extends DeliveryFilter {
  /** Only deliveries with an id below this one; the newest when absent. */
  before?: number | undefined
  limit: number
}

/** A search of the delivery log, newest first, a page at a time. */
export interface FindQuery extends DeliveryFilter {
  /** Where the page starts: the `next` of the previous page; the newest when absent. */
  cursor?: string | undefined
  limit: number
}

/** A page of {@link Store.find}. */
export interface DeliveryPage {
  deliveries: DeliveryView[]
  /** The cursor of the next page, or `undefined` when this page is the last. */
  next: string | undefined
}

/** What {@link Store.retryMatching} did: how many dead letters matched and, unless a dry run, how many were queued. */
export interface RetryMatchingResult {
  matched: number
  retried?: number
}

/** A delivery as the admin API lists it. */
export interface DeliveryView {
  id: number
  source: string
  destination: string
  messageId: string
  type: string
  status: DeliveryStatus
  createdAt: string
  updatedAt: string
  nextAttemptAt: string | null
  lastError: string | null
  /** Why a pending delivery due now is held back by a limited URL (not an attempt), while it is. */
  waiting?: string
  /** The original delivery this one re-sends, for a replay's delivery (docs/replay.md). */
  replayOf?: number
  /**
   * The earlier delivery of the same user and destination this pending one waits behind
   * (docs/delivery-controls.md, "Ordering"); shown by the delivery log, absent when none.
   */
  waitingBehind?: number
  attempts: (RequestRecord & { at: string })[]
  message: unknown
}

/** What an audience sync changed: the user ids that joined and that left. */
export interface AudienceChange {
  added: string[]
  removed: string[]
}
