import { redactDatabase } from '../config/database-value'
import type { Store } from './store'

/** Whether a `database` option names a PostgreSQL server rather than a SQLite file. */
export function isPostgresUrl(database: string): boolean {
  return /^postgres(ql)?:\/\//i.test(database)
}

/**
 * Opens the store the `database` option names: a `postgres://` (or `postgresql://`) URL selects
 * PostgreSQL, shared by any number of relays; anything else is a SQLite file path (or
 * `':memory:'`), for one relay. Each implementation, and its driver, is loaded only when chosen.
 *
 * @throws {RelayError} `ERR_RELAY_DATABASE` when the database cannot be opened or prepared, and
 * `ERR_RELAY_DRIVER_MISSING` when the store's driver package is not installed.
 */
export async function openStore(
  database: string,
  // `tracklet relay --workers`: several processes use this store at once (see openSqliteStore).
  { sharedByProcesses = false }: { sharedByProcesses?: boolean } = {},
): Promise<Store> {
  try {
    if (isPostgresUrl(database)) {
      const { openPostgresStore } = await import('./postgres/postgres-store')
      return await openPostgresStore(database)
    }
    const { openSqliteStore } = await import('./sqlite/sqlite-store')
    return await openSqliteStore(database, Date.now, { sharedByProcesses })
  } catch (error) {
    // A net under each store's own care: whatever the error quotes, never the value's password.
    if (error instanceof Error) error.message = error.message.replaceAll(database, redactDatabase(database))
    throw error
  }
}
