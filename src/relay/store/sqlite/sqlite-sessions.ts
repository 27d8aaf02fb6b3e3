import type { SessionRole, SessionRow, SessionStore } from '../sessions'
import type { StatementCache } from './statement-cache'

// The statements of the sessions table (its schema: ../sessions-schema.ts).
const SQL = {
  insert: 'INSERT OR REPLACE INTO sessions (token_digest, created_at, last_seen_at, role) VALUES (?, ?, ?, ?)',
  find: 'SELECT created_at AS createdAt, last_seen_at AS lastSeenAt, role FROM sessions WHERE token_digest = ?',
  touch: 'UPDATE sessions SET last_seen_at = ? WHERE token_digest = ? AND last_seen_at < ?',
  delete: 'DELETE FROM sessions WHERE token_digest = ?',
  sweepEnded: 'DELETE FROM sessions WHERE last_seen_at < ? OR created_at < ?',
  sweepOldest: `DELETE FROM sessions WHERE token_digest IN
    (SELECT token_digest FROM sessions ORDER BY created_at DESC, token_digest LIMIT -1 OFFSET ?)`,
}

/** The {@link SessionStore} on the relay's SQLite database, over the store's own statements. */
export class SqliteSessions implements SessionStore {
  readonly #sql: StatementCache

  constructor(sql: StatementCache) {
    this.#sql = sql
  }

  async insert(digest: string, now: number, role: SessionRole): Promise<void> {
    this.#sql.get(SQL.insert).run(digest, now, now, role)
  }

  async find(digest: string): Promise<SessionRow | undefined> {
    return this.#sql.get(SQL.find).get(digest) as SessionRow | undefined
  }

  async touch(digest: string, now: number): Promise<void> {
    this.#sql.get(SQL.touch).run(now, digest, now)
  }

  async delete(digest: string): Promise<void> {
    this.#sql.get(SQL.delete).run(digest)
  }

  async sweep(idleBefore: number, madeBefore: number, keep: number): Promise<number> {
    return this.#sql.db.transaction(
      () =>
        this.#sql.get(SQL.sweepEnded).run(idleBefore, madeBefore).changes +
        this.#sql.get(SQL.sweepOldest).run(keep).changes,
    )()
  }
}
