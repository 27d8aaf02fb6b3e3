import { isPostgresUrl, redactDatabase } from '../config/database-value'
import { RELAY_DEFAULTS } from '../config/defaults'
import type { Store } from './store'

/** Options of {@link openStore}. */
export interface OpenStoreOptions {
  /**
   * The longest one store call may wait for the database, ms (the relay's `storeTimeout`): on
   * PostgreSQL for a connection and its statement, on SQLite for a lock another process holds.
   */
  storeTimeout?: number
  /**
   * Several processes use this store at once (`tracklet relay --workers N`). On SQLite the leases
   * and probes standing are then theirs, not a previous run's, so they are not voided on open (the
   * primary opens the file once, without this, before it forks).
   */
  sharedByProcesses?: boolean
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
    return new SqliteStore(await openSqliteDatabase(database, { busyTimeout: storeTimeout }), Date.now, {
      sharedByProcesses: options.sharedByProcesses ?? false,
    })
  } catch (error) {
    // A net under each store's own care: whatever the error quotes, never the value's password.
    if (error instanceof Error) error.message = error.message.replaceAll(database, redactDatabase(database))
    throw error
  }
}
