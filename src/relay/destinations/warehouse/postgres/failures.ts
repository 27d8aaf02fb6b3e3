/**
 * How a failed statement is taken (docs/warehouse.md, "When a load fails"): `transient` when the
 * warehouse is down, busy or refusing (a connection lost, a timeout, a lock, a deadlock, a role
 * without the rights it needs): every message is retried on the usual schedule. `stale` when a
 * table or column the loader knew of is gone (someone dropped it): retried too, after the cached
 * schema is read again. `data` otherwise: something in the messages themselves, so each is
 * loaded alone to find the one at fault.
 */
export type FailureKind = 'transient' | 'stale' | 'data'

// SQLSTATE classes (the first two characters) and codes that say the warehouse, not the data, is
// at fault: 08 connection, 25 transaction state, 28 authorization, 3D no such database, 40 rolled
// back (deadlock, serialization), 53 resources, 55 object not ready (lock not available), 57
// operator intervention (shut down, statement timeout), 58 system, XX internal; 42501 a right
// missing.
const TRANSIENT_CLASSES = new Set(['08', '25', '28', '3D', '40', '53', '55', '57', '58', 'XX'])
const TRANSIENT_CODES = new Set(['42501'])
// No such table (42P01) or column (42703): the cached schema is out of date.
const STALE_CODES = new Set(['42P01', '42703'])

/** What `error`, thrown by a load's statement, says about where the fault lies. */
export function failureKind(error: unknown): FailureKind {
  const code = (error as { code?: unknown } | null)?.code
  // No SQLSTATE: the network, pg's own timers, the pool (ECONNREFUSED, "timeout exceeded").
  if (typeof code !== 'string' || !/^[0-9A-Z]{5}$/.test(code)) return 'transient'
  if (STALE_CODES.has(code)) return 'stale'
  if (TRANSIENT_CODES.has(code) || TRANSIENT_CLASSES.has(code.slice(0, 2))) return 'transient'
  return 'data'
}

/** Whether creating a schema or table failed only because another loader made it first. */
export function isRaceLost(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code
  // 42P06 schema exists, 42P07 table exists, 23505 the catalog's unique index (two CREATEs).
  return code === '42P06' || code === '42P07' || code === '23505'
}
