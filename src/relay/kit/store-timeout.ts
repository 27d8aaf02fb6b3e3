/**
 * The longest one store call waits for the database when no `storeTimeout` is set, ms: the
 * relay's default (`RELAY_DEFAULTS.storeTimeout`), and a PostgreSQL pool's opened without settings.
 */
export const DEFAULT_STORE_TIMEOUT_MS = 5000
