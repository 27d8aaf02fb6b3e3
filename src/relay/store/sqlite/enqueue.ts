import type { NewDelivery } from '../store'
import type { NewViolation } from '../violations'
import type { SqliteViolations } from './sqlite-violations'
import type { StatementCache } from './statement-cache'
import { ENQUEUE_PARAMS, ENQUEUE_ROWS, enqueueParams, SQLITE_STATEMENTS as SQL } from './statements'

/** Writes deliveries (and the violations found in their messages); answers how many were new. */
export type EnqueueTransaction = (
  deliveries: readonly NewDelivery[],
  violations?: readonly NewViolation[],
  unrecorded?: (error: Error) => void,
) => number

/** No violations to record with a group, and no one to tell of them. */
export const NONE: readonly NewViolation[] = []
export const NEVER = (): void => {}

/**
 * The outbox's enqueue as one transaction: the violations first (in a savepoint of their own, see
 * `SqliteViolations.insertWithin`), then the deliveries, {@link ENQUEUE_ROWS} to a statement and
 * the rest one by one; a duplicate (the unique index on message id and route) is skipped.
 */
export function enqueueTransaction(
  sql: StatementCache,
  violations: SqliteViolations,
  now: () => number,
): EnqueueTransaction {
  // Prepared here, once: the long statement's text is not rebuilt (and looked up) per transaction.
  const many = sql.get(SQL.enqueue(ENQUEUE_ROWS))
  const one = sql.get(SQL.enqueue(1))
  return sql.db.transaction((deliveries: readonly NewDelivery[], found = NONE, unrecorded = NEVER) => {
    if (found.length > 0) violations.insertWithin(found, unrecorded)
    const at = now()
    const params: unknown[] = new Array(ENQUEUE_ROWS * ENQUEUE_PARAMS)
    let inserted = 0
    let i = 0
    for (; i + ENQUEUE_ROWS <= deliveries.length; i += ENQUEUE_ROWS) {
      for (let row = 0; row < ENQUEUE_ROWS; row++) enqueueParams(deliveries[i + row]!, at, params, row * ENQUEUE_PARAMS)
      inserted += many.run(params).changes
    }
    params.length = ENQUEUE_PARAMS
    for (; i < deliveries.length; i++) {
      enqueueParams(deliveries[i]!, at, params, 0)
      inserted += one.run(params).changes
    }
    return inserted
  })
}
