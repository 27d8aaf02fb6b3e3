import type Database from 'better-sqlite3'
import type { DeliverableMessage } from '../shared/message'
import type { RelayDatabase } from './database'

/** Where a delivery stands: waiting for (another) attempt, done, or dead-lettered. */
export type DeliveryStatus = 'pending' | 'delivered' | 'failed'

/** The delivery statuses, for validating a filter. */
export const DELIVERY_STATUSES: readonly DeliveryStatus[] = ['pending', 'delivered', 'failed']

/** A delivery to write: one message for one destination of one source. */
export interface NewDelivery {
  source: string
  destination: string
  messageId: string
  type: string
  /** The message's JSON, serialised once at ingest. */
  json: string
}

/** A due delivery, as the worker attempts it. */
export interface DueDelivery {
  id: number
  source: string
  destination: string
  message: DeliverableMessage
  /** Attempts made so far in the current retry window. */
  attempts: number
  /** When the window's first attempt started (epoch ms), if there was one. */
  firstAttemptAt: number | undefined
}

/** One HTTP request of an attempt, as the delivery log shows it. */
export interface AttemptRecord {
  url: string
  status?: number
  error?: string
  ms: number
}

/** What became of one attempt, written back by the worker. */
export interface AttemptOutcome {
  id: number
  /** When the attempt started, epoch ms. */
  at: number
  requests: readonly AttemptRecord[]
  /** Whether the delivery is now done, due again at `nextAttemptAt`, or dead-lettered. */
  next:
    | { status: 'delivered' }
    | { status: 'pending'; nextAttemptAt: number; error: string }
    | { status: 'failed'; error: string }
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
  attempts: (AttemptRecord & { at: string })[]
  message: unknown
}

interface DeliveryRow {
  id: number
  source: string
  destination: string
  message_id: string
  type: string
  message: string
  status: DeliveryStatus
  attempts: number
  first_attempt_at: number | null
  next_attempt_at: number
  last_error: string | null
  created_at: number
  updated_at: number
}

interface AttemptRow {
  delivery_id: number
  at: number
  url: string
  status: number | null
  error: string | null
  ms: number
}

/**
 * The durable outbox: deliveries and their attempts in SQLite. Every method that writes runs one
 * transaction, so a batch of deliveries (or of outcomes) is committed whole or not at all.
 * Statements are prepared once.
 */
export class Outbox {
  /** The database the outbox lives in (shared with the audience store). */
  readonly db: RelayDatabase
  /** The time source, epoch ms (injectable so retry windows can be tested without waiting). */
  readonly #now: () => number
  readonly #insert: Database.Statement
  readonly #due: Database.Statement
  readonly #nextDue: Database.Statement
  readonly #update: Database.Statement
  readonly #insertAttempt: Database.Statement
  readonly #retry: Database.Statement
  readonly #statusOf: Database.Statement
  readonly #listAll: Database.Statement
  readonly #listByStatus: Database.Statement
  readonly #enqueueAll: (deliveries: readonly NewDelivery[]) => number
  readonly #recordAll: (outcomes: readonly AttemptOutcome[]) => void

  constructor(db: RelayDatabase, now: () => number = Date.now) {
    this.db = db
    this.#now = now
    this.#insert = db.prepare(`
      INSERT OR IGNORE INTO deliveries (source, destination, message_id, type, message, status, next_attempt_at, created_at, updated_at)
      VALUES (?, ?, ?, ?, ?, 'pending', ?, ?, ?)`)
    this.#due = db.prepare(`
      SELECT id, source, destination, message, attempts, first_attempt_at FROM deliveries
      WHERE source = ? AND status = 'pending' AND next_attempt_at <= ?
      ORDER BY next_attempt_at, id LIMIT ?`)
    this.#nextDue = db.prepare(`
      SELECT MIN(next_attempt_at) AS at FROM deliveries WHERE source = ? AND status = 'pending' AND next_attempt_at > ?`)
    this.#update = db.prepare(`
      UPDATE deliveries SET status = ?, attempts = attempts + 1, first_attempt_at = coalesce(first_attempt_at, ?),
        next_attempt_at = ?, last_error = ?, updated_at = ?
      WHERE id = ?`)
    this.#insertAttempt = db.prepare(
      'INSERT INTO attempts (delivery_id, at, url, status, error, ms) VALUES (?, ?, ?, ?, ?, ?)',
    )
    this.#retry = db.prepare(`
      UPDATE deliveries SET status = 'pending', attempts = 0, first_attempt_at = NULL, next_attempt_at = ?, updated_at = ?
      WHERE id = ? AND status = 'failed'`)
    this.#statusOf = db.prepare('SELECT status FROM deliveries WHERE id = ?').pluck()
    this.#listAll = db.prepare('SELECT * FROM deliveries WHERE id > ? ORDER BY id LIMIT ?')
    this.#listByStatus = db.prepare('SELECT * FROM deliveries WHERE status = ? AND id > ? ORDER BY id LIMIT ?')

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
        for (const r of o.requests)
          this.#insertAttempt.run(o.id, o.at, r.url, r.status ?? null, r.error ?? null, Math.round(r.ms))
      }
    })
  }

  /**
   * Writes deliveries in one transaction, due at once. A delivery whose message id the source
   * already sent to that destination is skipped (the client sent the same batch again).
   * Returns how many were new.
   */
  enqueue(deliveries: readonly NewDelivery[]): number {
    return deliveries.length === 0 ? 0 : this.#enqueueAll(deliveries)
  }

  /**
   * Up to `limit` of the source's due deliveries, oldest due first, leaving out the ids in `skip`.
   * A read: a delivery stays pending until its outcome is recorded, so the worker passes those it
   * has already taken. `now` is the instant "due" is judged at (pass the same one to
   * {@link nextDueAt}, so that no delivery falls between the two).
   */
  due(source: string, limit: number, skip: ReadonlySet<number> = new Set(), now = this.#now()): DueDelivery[] {
    const rows = this.#due.all(source, now, limit + skip.size) as DeliveryRow[]
    const due: DueDelivery[] = []
    for (const row of rows) {
      if (due.length === limit) break
      if (skip.has(row.id)) continue
      due.push({
        id: row.id,
        source: row.source,
        destination: row.destination,
        message: JSON.parse(row.message) as DeliverableMessage,
        attempts: row.attempts,
        firstAttemptAt: row.first_attempt_at ?? undefined,
      })
    }
    return due
  }

  /** When the source's next pending delivery falls due (epoch ms), if one is due after `now`. */
  nextDueAt(source: string, now = this.#now()): number | undefined {
    const row = this.#nextDue.get(source, now) as { at: number | null }
    return row.at ?? undefined
  }

  /**
   * Writes the outcomes of attempts, with every request made, in one transaction. Without waiting
   * for the disk (`synchronous = NORMAL`): the commit survives a crash of the process, and if a
   * power cut loses it, the deliveries are pending again and sent again — at-least-once holds,
   * while acknowledged messages (written by {@link enqueue}) always wait for the disk.
   */
  record(outcomes: readonly AttemptOutcome[]): void {
    if (outcomes.length === 0) return
    this.db.pragma('synchronous = NORMAL')
    try {
      this.#recordAll(outcomes)
    } finally {
      this.db.pragma('synchronous = FULL')
    }
  }

  /**
   * Dead-letters the pending deliveries of every source not in `configured` (renamed or removed
   * since they were written): no worker lane would ever take them. Their `last_error` names the
   * source; once it is configured again they can be retried by hand. Returns how many there were.
   */
  failUnconfiguredSources(configured: readonly string[]): number {
    const now = this.#now()
    const placeholders = configured.map(() => '?').join(',')
    return this.db
      .prepare(`
        UPDATE deliveries SET status = 'failed', last_error = 'source "' || source || '" is no longer configured', updated_at = ?
        WHERE status = 'pending'${configured.length === 0 ? '' : ` AND source NOT IN (${placeholders})`}`)
      .run(now, ...configured).changes
  }

  /**
   * Puts a dead-lettered delivery back in the queue with a fresh retry window, due at once.
   * Its attempts so far stay in the log.
   */
  retry(id: number): 'retried' | 'not-found' | 'not-failed' {
    const now = this.#now()
    if (this.#retry.run(now, now, id).changes === 1) return 'retried'
    return this.#statusOf.get(id) === undefined ? 'not-found' : 'not-failed'
  }

  /** A page of the delivery log, by id, after the id `after`, with each delivery's attempts. */
  list(options: { status?: DeliveryStatus | undefined; after: number; limit: number }): DeliveryView[] {
    const rows = (
      options.status === undefined
        ? this.#listAll.all(options.after, options.limit)
        : this.#listByStatus.all(options.status, options.after, options.limit)
    ) as DeliveryRow[]
    if (rows.length === 0) return []
    const placeholders = rows.map(() => '?').join(',')
    const attemptRows = this.db
      .prepare(
        `SELECT delivery_id, at, url, status, error, ms FROM attempts WHERE delivery_id IN (${placeholders}) ORDER BY id`,
      )
      .all(...rows.map((r) => r.id)) as AttemptRow[]
    const attemptsById = new Map<number, DeliveryView['attempts']>()
    for (const a of attemptRows) {
      const list = attemptsById.get(a.delivery_id) ?? []
      list.push({
        at: new Date(a.at).toISOString(),
        url: a.url,
        ...(a.status === null ? {} : { status: a.status }),
        ...(a.error === null ? {} : { error: a.error }),
        ms: a.ms,
      })
      attemptsById.set(a.delivery_id, list)
    }
    return rows.map((row) => ({
      id: row.id,
      source: row.source,
      destination: row.destination,
      messageId: row.message_id,
      type: row.type,
      status: row.status,
      createdAt: new Date(row.created_at).toISOString(),
      updatedAt: new Date(row.updated_at).toISOString(),
      nextAttemptAt: row.status === 'pending' ? new Date(row.next_attempt_at).toISOString() : null,
      lastError: row.last_error,
      attempts: attemptsById.get(row.id) ?? [],
      message: JSON.parse(row.message) as unknown,
    }))
  }
}
