import type Database from 'better-sqlite3'

/**
 * Prepares each SQL text (of `./statements.ts`) once per database and keeps the statement for the database's life.
 * Statements whose text depends on a list's length (`IN (?, ?, …)`) would otherwise be prepared
 * anew on every call and left to the garbage collector; better-sqlite3 finalising them from a GC
 * callback aborts Node 24 (an assertion in RemoveEnvironmentCleanupHook), and preparing once is
 * cheaper anyway. The texts are few: one per list length in use.
 */
export class StatementCache {
  readonly #db: Database.Database
  readonly #statements = new Map<string, Database.Statement>()

  constructor(db: Database.Database) {
    this.#db = db
  }

  /** The database the statements run on, for a transaction over several of them. */
  get db(): Database.Database {
    return this.#db
  }

  /** The prepared statement for `sql`. */
  get(sql: string): Database.Statement {
    let statement = this.#statements.get(sql)
    if (statement === undefined) {
      statement = this.#db.prepare(sql)
      this.#statements.set(sql, statement)
    }
    return statement
  }
}
