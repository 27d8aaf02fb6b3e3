import type { AuditRecord } from '../source-configs'
import {
  type AddSuppressions,
  EVERY_SOURCE,
  type RemoveSuppression,
  type Suppression,
  type SuppressionChange,
  type SuppressionStore,
} from '../suppressions'
import type { StatementCache } from './statement-cache'
import { versionStatements } from '../version-row'

// The statements of the suppressions' tables (their schema: ./suppressions-schema.ts).
const SQL = {
  ...versionStatements('suppression_version'),
  list: 'SELECT user_id AS userId, source, at FROM suppressions ORDER BY at, user_id, source',
  insert: 'INSERT OR IGNORE INTO suppressions (user_id, source, at) VALUES (?, ?, ?)',
  removeOne: 'DELETE FROM suppressions WHERE user_id = ? AND source = ? RETURNING source',
  removeAll: 'DELETE FROM suppressions WHERE user_id = ? RETURNING source',
  audit: 'INSERT INTO config_audit (at, actor, action, target, changes) VALUES (?, ?, ?, ?, ?)',
}

/** The {@link SuppressionStore} on the relay's SQLite file, shared by the `--workers` processes on it. */
export class SqliteSuppressions implements SuppressionStore {
  readonly #sql: StatementCache

  constructor(sql: StatementCache) {
    this.#sql = sql
  }

  async version(): Promise<number> {
    return this.#sql.get(SQL.version).pluck().get() as number
  }

  async list(): Promise<Suppression[]> {
    const rows = this.#sql.get(SQL.list).all() as { userId: string; source: string; at: number }[]
    return rows.map(suppressionOf)
  }

  async add({ userIds, source, at, audit }: AddSuppressions): Promise<SuppressionChange> {
    const insert = this.#sql.get(SQL.insert)
    return this.#sql.db.transaction((): SuppressionChange => {
      let changed = 0
      for (const userId of userIds) {
        if (insert.run(userId, source ?? EVERY_SOURCE, at).changes === 0) continue
        changed++
        this.#audit(audit(userId))
      }
      return { changed, version: changed > 0 ? this.#bump() : this.#current() }
    })()
  }

  async remove({ userId, source, audit }: RemoveSuppression): Promise<SuppressionChange> {
    return this.#sql.db.transaction((): SuppressionChange => {
      const removed = (
        source === undefined
          ? this.#sql.get(SQL.removeAll).pluck().all(userId)
          : this.#sql.get(SQL.removeOne).pluck().all(userId, source)
      ) as string[]
      for (const scope of removed) this.#audit(audit(scope === EVERY_SOURCE ? undefined : scope))
      return { changed: removed.length, version: removed.length > 0 ? this.#bump() : this.#current() }
    })()
  }

  #audit(entry: AuditRecord): void {
    this.#sql.get(SQL.audit).run(entry.at, entry.actor, entry.action, entry.target, entry.changes)
  }

  #bump(): number {
    return this.#sql.get(SQL.bump).pluck().get() as number
  }

  #current(): number {
    return this.#sql.get(SQL.version).pluck().get() as number
  }
}

function suppressionOf(row: { userId: string; source: string; at: number }): Suppression {
  const { userId, source, at } = row
  return source === EVERY_SOURCE ? { userId, at: Number(at) } : { userId, source, at: Number(at) }
}
