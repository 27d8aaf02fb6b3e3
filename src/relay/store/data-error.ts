/**
 * Whether a store write failed because of the data it was given (sending the same data again
 * fails again; other writes are unaffected), not because the database is unreachable, full, slow
 * or broken. Ingest refuses the request that carried such data and keeps the rest; the health
 * check counts only the other kind.
 *
 * PostgreSQL says it in the SQLSTATE class: 22 (data exception, such as `invalid byte sequence
 * for encoding "UTF8": 0x00`), 23 (integrity constraint) and 54000 (a program limit, such as an
 * index row too large). SQLite in its error code: a constraint the schema declares, a value too
 * big or of the wrong type. A trigger's `RAISE` (SQLite) is not counted: the store declares none,
 * so one that fires was put there by someone, for their own reasons.
 */
export function isDataError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code
  if (typeof code !== 'string') return false
  if (/^[0-9A-Z]{5}$/.test(code)) return code.startsWith('22') || code.startsWith('23') || code === '54000'
  return SQLITE_DATA_CODES.has(code)
}

/**
 * Whether a store call's error is the store's own failure (unreachable, full, slow, broken): not
 * the data's ({@link isDataError}), and not the caller's (a `TypeError`: an argument the store
 * refuses, such as a cursor it never gave). The one rule `/healthz` (`telemetry/watched-store.ts`)
 * and the admin API's 503s (`console/store-unavailable.ts`) judge by.
 */
export function isStoreFailure(error: unknown): boolean {
  return !(error instanceof TypeError) && !isDataError(error)
}

const SQLITE_DATA_CODES: ReadonlySet<string> = new Set([
  'SQLITE_TOOBIG',
  'SQLITE_MISMATCH',
  'SQLITE_CONSTRAINT_CHECK',
  'SQLITE_CONSTRAINT_NOTNULL',
  'SQLITE_CONSTRAINT_UNIQUE',
  'SQLITE_CONSTRAINT_PRIMARYKEY',
  'SQLITE_CONSTRAINT_FOREIGNKEY',
  'SQLITE_CONSTRAINT_DATATYPE',
])
