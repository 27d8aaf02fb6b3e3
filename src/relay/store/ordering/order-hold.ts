// Ordered delivery per user in the store (docs/delivery-controls.md, "Ordering"): a delivery to an
// ordered destination carries its user's ordering key (./order-key.ts); a claim takes it only when
// no earlier delivery with the same key is still pending (waiting for a retry, in flight, parked
// behind a circuit). A delivered, filtered or dead-lettered one no longer holds the rest. The
// rule lives in the claim's SQL, so it holds across relays, workers and restarts alike.

/** The column that holds a delivery's ordering key (NULL: not ordered), on both stores. */
export const ORDER_KEY_COLUMN = 'order_key'
const K = ORDER_KEY_COLUMN

/** The partial index the rule reads: each key's pending deliveries, in the order received. */
export const ORDER_INDEX_COLUMNS = `(${ORDER_KEY_COLUMN}, id)
  WHERE ${ORDER_KEY_COLUMN} IS NOT NULL AND status = 'pending'`

/**
 * SQL, the same in both dialects: the row `row` (an alias over `table`, the table of pending
 * deliveries) is free to go, not held behind an earlier pending delivery of its user. A row
 * without a key is always free, and costs nothing more.
 */
export function orderFree(table: string, row: string): string {
  return `(${row}.${K} IS NULL OR NOT EXISTS (SELECT 1 FROM ${table} ahead
      WHERE ahead.${K} = ${row}.${K} AND ahead.status = 'pending' AND ahead.id < ${row}.id))`
}

/**
 * SQL: the earliest pending delivery that holds the delivery `$id` (a parameter as the dialect
 * spells it) behind it, as `ahead`; no row when it is not held.
 */
export function orderAheadOf(table: string, id: string): string {
  return `SELECT ahead.id AS ahead FROM ${table} held JOIN ${table} ahead
      ON ahead.${K} = held.${K} AND ahead.status = 'pending' AND ahead.id < held.id
    WHERE held.id = ${id} AND held.status = 'pending' AND held.${K} IS NOT NULL
    ORDER BY ahead.id LIMIT 1`
}

/**
 * SQL: per route, how many pending deliveries wait behind an earlier one of their user (for
 * metrics and the endpoints view), as `source`, `destination`, `count`.
 */
export function orderWaitingIn(table: string): string {
  return `SELECT held.source, held.destination, count(*) AS count FROM ${table} held
    WHERE held.${K} IS NOT NULL AND held.status = 'pending' AND EXISTS (SELECT 1 FROM ${table} ahead
      WHERE ahead.${K} = held.${K} AND ahead.status = 'pending' AND ahead.id < held.id)
    GROUP BY held.source, held.destination ORDER BY held.source, held.destination`
}
