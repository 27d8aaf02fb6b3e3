import { redactDatabase } from '../config/database-value'
import { RELAY_DEFAULTS } from '../config/defaults'
import type { Store } from './store'

/** Whether a `database` option names a PostgreSQL server rather than a SQLite file. */
export function isPostgresUrl(database: string): boolean {
  return /^postgres(ql)?:\/\//i.test(database)
}

/** Options of {@link openStore}. */
export interface OpenStoreOptions {
  /**
   * The longest one store call may wait for the database, ms (the relay's `storeTimeout`): on
   * PostgreSQL for a connection and its statement, on SQLite for a lock another process holds.
   */
  storeTimeout?: number
}

/**
 * Opens the store the `database` option names: a `postgres://` (or `postgresql://`) URL selects
 * PostgreSQL, shared by any number of relays; anything else is a SQLite file path (or
 * `':memory:'`), for one relay. Each implementation, and its driver, is loaded only when chosen.
 *
 * @throws {RelayError} `ERR_RELAY_DATABASE` when the database cannot be opened or prepared, and
 * `ERR_RELAY_DRIVER_MISSING` when the store's driver package is not installed.
 */
export async function openStore(database: string, options: OpenStoreOptions = {}): Promise<Store> {
  const storeTimeout = options.storeTimeout ?? RELAY_DEFAULTS.storeTimeout
  try {
    if (isPostgresUrl(database)) {
      const { openPostgresStore } = await import('./postgres/postgres-store')
      return await openPostgresStore(database, { pool: { storeTimeout } })
    }
    const [{ SqliteStore }, { openSqliteDatabase }] = await Promise.all([
      import('./sqlite/sqlite-store'),
      import('./sqlite/schema'),
    ])
    return new SqliteStore(await openSqliteDatabase(database, { busyTimeout: storeTimeout }))
  } catch (error) {
    // A net under each store's own care: whatever the error quotes, never the value's password.
    if (error instanceof Error) error.message = error.message.replaceAll(database, redactDatabase(database))
    throw error
  }
}
