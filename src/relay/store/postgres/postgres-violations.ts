import {
  VIOLATION_INSERT_COLUMNS,
  type ViolationRow,
  violationCountOf,
  violationCountsText,
  violationPage,
  violationSearch,
} from '../violation-rows'
import type { NewViolation, ViolationCount, ViolationPage, ViolationQuery, ViolationStore } from '../violations'
import type { Queryable } from './postgres-circuits'

// The statements of the violations table (its schema: ../violations-schema.ts). Each is one
// statement (a batch travels as arrays), so none needs a transaction.
const SQL = {
  // Without waiting for the WAL to reach the disk (synchronous_commit off for this transaction,
  // set within the statement): written right after the request's messages, which did wait, so a
  // database crash may lose at most the last few records, never a message.
  insert: `WITH relaxed AS (SELECT set_config('synchronous_commit', 'off', true))
    INSERT INTO violations (${VIOLATION_INSERT_COLUMNS})
    SELECT v.* FROM relaxed, unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[]) AS v`,
  counts: violationCountsText((n) => `$${n}`),
  prune: 'DELETE FROM violations WHERE id IN (SELECT id FROM violations WHERE at < $1 ORDER BY id LIMIT $2)',
  eraseUser: 'DELETE FROM violations WHERE user_id = $1',
}

/** The {@link ViolationStore} on PostgreSQL, over the store's pool: every relay on the database sees all. */
export class PostgresViolations implements ViolationStore {
  readonly #db: Queryable

  constructor(db: Queryable) {
    this.#db = db
  }

  async record(violations: readonly NewViolation[]): Promise<void> {
    if (violations.length === 0) return
    const column = <T>(pick: (v: NewViolation) => T): T[] => violations.map(pick)
    await this.#db.query(SQL.insert, [
      column((v) => Date.parse(v.at)),
      column((v) => v.source),
      column((v) => v.messageId),
      column((v) => v.type),
      column((v) => v.event ?? null),
      column((v) => v.kind),
      column((v) => v.path),
      column((v) => v.message),
      column((v) => v.userId ?? null),
    ])
  }

  async find(query: ViolationQuery): Promise<ViolationPage> {
    const { text, values } = violationSearch(query, (n) => `$${n}`)
    const { rows } = await this.#db.query(text, values)
    return violationPage(rows as ViolationRow[], query.limit)
  }

  async counts(since: number): Promise<ViolationCount[]> {
    const { rows } = await this.#db.query(SQL.counts, [since])
    return (rows as Parameters<typeof violationCountOf>[0][]).map(violationCountOf)
  }

  async prune(before: number, limit: number): Promise<number> {
    const { rows } = await this.#db.query(`WITH gone AS (${SQL.prune} RETURNING 1) SELECT count(*) AS n FROM gone`, [
      before,
      limit,
    ])
    return Number((rows[0] as { n: string }).n)
  }

  async eraseUser(userId: string): Promise<number> {
    const { rows } = await this.#db.query(
      `WITH gone AS (${SQL.eraseUser} RETURNING 1) SELECT count(*) AS n FROM gone`,
      [userId],
    )
    return Number((rows[0] as { n: string }).n)
  }
}
