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

  constructor(sql: StatementCache) {
    this.#sql = sql
  }

  async record(violations: readonly NewViolation[]): Promise<void> {
    if (violations.length === 0) return
    const insert = this.#sql.get(SQL.insert)
    const { db } = this.#sql
    // Without waiting for the disk (synchronous = NORMAL), as the worker's writes: written right
    // after the request's messages, which did wait; the next commit that waits (the next ingest)
    // makes it durable too, and a crash of the process loses nothing.
    db.pragma('synchronous = NORMAL')
    try {
      this.#write(violations, insert)
    } finally {
      db.pragma('synchronous = FULL')
    }
  }

  #write(violations: readonly NewViolation[], insert: ReturnType<StatementCache['get']>): void {
    this.#sql.db.transaction(() => {
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
    })()
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
