import {
  VIOLATION_INSERT_COLUMNS,
  type ViolationRow,
  violationCountOf,
  violationCountsText,
  violationPage,
  violationSearch,
} from '../violation-rows'
import type { NewViolation, ViolationCount, ViolationPage, ViolationQuery, ViolationStore } from '../violations'
import type { StatementCache } from './statement-cache'
import { withoutWaitingForDisk } from './statements'

// The statements of the violations table (its schema: ../violations-schema.ts).
const SQL = {
  insert: `INSERT INTO violations (${VIOLATION_INSERT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  counts: violationCountsText(() => '?'),
  prune: 'DELETE FROM violations WHERE id IN (SELECT id FROM violations WHERE at < ? ORDER BY id LIMIT ?)',
  eraseUser: 'DELETE FROM violations WHERE user_id = ?',
}

/** The {@link ViolationStore} on the relay's SQLite database, over the store's own statements. */
export class SqliteViolations implements ViolationStore {
  readonly #sql: StatementCache
  /**
   * The inserts of one call, in one transaction, or in a savepoint within the caller's (wrapped
   * once: db.transaction() wraps anew).
   */
  readonly #write: (violations: readonly NewViolation[]) => void

  constructor(sql: StatementCache) {
    this.#sql = sql
    const insert = sql.get(SQL.insert)
    this.#write = sql.db.transaction((violations: readonly NewViolation[]) => {
      for (const v of violations) {
        insert.run(
          Date.parse(v.at),
          v.source,
          v.messageId,
          v.type,
          v.event ?? null,
          v.kind,
          v.path,
          v.message,
          v.userId ?? null,
        )
      }
    })
  }

  /**
   * Inserts `violations` within the transaction under way (the outbox's enqueue), in a savepoint:
   * should an insert fail, they alone are rolled back and `unrecorded` is told.
   */
  insertWithin(violations: readonly NewViolation[], unrecorded: (error: Error) => void): void {
    try {
      this.#write(violations)
    } catch (error) {
      unrecorded(error as Error)
    }
  }

  async record(violations: readonly NewViolation[]): Promise<void> {
    if (violations.length === 0) return
    // Without waiting for the disk (synchronous = NORMAL), as the worker's writes: written right
    // after the request's messages, which did wait; the next commit that waits (the next ingest)
    // makes it durable too, and a crash of the process loses nothing.
    withoutWaitingForDisk(this.#sql, () => this.#write(violations))
  }

  async find(query: ViolationQuery): Promise<ViolationPage> {
    const { text, values } = violationSearch(query, () => '?')
    return violationPage(this.#sql.get(text).all(...values) as ViolationRow[], query.limit)
  }

  async counts(since: number): Promise<ViolationCount[]> {
    return (this.#sql.get(SQL.counts).all(since) as Parameters<typeof violationCountOf>[0][]).map(violationCountOf)
  }

  async prune(before: number, limit: number): Promise<number> {
    return this.#sql.get(SQL.prune).run(before, limit).changes
  }

  async eraseUser(userId: string): Promise<number> {
    return this.#sql.get(SQL.eraseUser).run(userId).changes
  }
}
