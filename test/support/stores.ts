import { join } from 'node:path'
import { openPostgresStore } from '../../src/relay/store/postgres/postgres-store'
import { openSqliteStore } from '../../src/relay/store/sqlite/sqlite-store'
import type { Store } from '../../src/relay/store/store'
import { freshPostgresDatabase } from './postgres'

/** The two stores every relay behaviour is tested on. */
export const STORE_KINDS = ['sqlite', 'postgres'] as const
export type StoreKind = (typeof STORE_KINDS)[number]

/**
 * A `database` value for a new, empty store of `kind` that a test may open several times (a
 * relay restarted on it): a file in `dir` for SQLite, a fresh database for PostgreSQL.
 */
export async function newDatabase(kind: StoreKind, dir: string, name = 'relay.db'): Promise<string> {
  return kind === 'sqlite' ? join(dir, name) : freshPostgresDatabase()
}

/** A `database` value for a relay that needs a store of its own only while it runs. */
export async function throwawayDatabase(kind: StoreKind): Promise<string> {
  return kind === 'sqlite' ? ':memory:' : freshPostgresDatabase()
}

/**
 * Opens an empty store of `kind` with the clock `now`, or the store at `database` when given. On
 * PostgreSQL a test's clock stands in for the database's as well (which judges leases and due
 * times), so moving it moves both; without one, both clocks are real.
 */
export async function openTestStore(kind: StoreKind, now?: () => number, database?: string): Promise<Store> {
  const at = database ?? (await throwawayDatabase(kind))
  if (kind === 'sqlite') return openSqliteStore(at, now)
  return openPostgresStore(at, now === undefined ? {} : { now, databaseNow: now })
}
