import type { SessionRole, SessionRow, SessionStore } from '../sessions'
import type { Queryable } from './postgres-circuits'

// The statements of the sessions table (its schema: ../sessions-schema.ts). Each is one
// statement, so none needs a transaction.
const SQL = {
  insert: `INSERT INTO sessions (token_digest, created_at, last_seen_at, role) VALUES ($1, $2, $2, $3)
    ON CONFLICT (token_digest) DO UPDATE SET created_at = $2, last_seen_at = $2, role = $3`,
  find: 'SELECT created_at AS "createdAt", last_seen_at AS "lastSeenAt", role FROM sessions WHERE token_digest = $1',
  touch: 'UPDATE sessions SET last_seen_at = $2 WHERE token_digest = $1 AND last_seen_at < $2',
  delete: 'DELETE FROM sessions WHERE token_digest = $1',
  sweep: `WITH ended AS (
      DELETE FROM sessions WHERE last_seen_at < $1 OR created_at < $2 RETURNING token_digest
    ), surplus AS (
      DELETE FROM sessions WHERE token_digest IN (
        SELECT token_digest FROM sessions WHERE last_seen_at >= $1 AND created_at >= $2
        ORDER BY created_at DESC, token_digest OFFSET $3
      ) RETURNING token_digest
    )
    SELECT (SELECT count(*) FROM ended) + (SELECT count(*) FROM surplus) AS gone`,
}

/**
 * The {@link SessionStore} on PostgreSQL, over the store's pool: every relay on the database
 * sees a session any of them made, and none once any of them ended it.
 */
export class PostgresSessions implements SessionStore {
  readonly #db: Queryable

  constructor(db: Queryable) {
    this.#db = db
  }

  async insert(digest: string, now: number, role: SessionRole): Promise<void> {
    await this.#db.query(SQL.insert, [digest, now, role])
  }

  async find(digest: string): Promise<SessionRow | undefined> {
    const { rows } = await this.#db.query(SQL.find, [digest])
    return rows[0] as SessionRow | undefined
  }

  async touch(digest: string, now: number): Promise<void> {
    await this.#db.query(SQL.touch, [digest, now])
  }

  async delete(digest: string): Promise<void> {
    await this.#db.query(SQL.delete, [digest])
  }

  async sweep(idleBefore: number, madeBefore: number, keep: number): Promise<number> {
    const { rows } = await this.#db.query(SQL.sweep, [idleBefore, madeBefore, keep])
    return Number((rows[0] as { gone: number | string }).gone)
  }
}
