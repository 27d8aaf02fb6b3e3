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

/**
 * SQL, the same in both dialects: puts each held delivery's due time at its line's head's (the
 * user's earliest pending delivery), so that a claim, which reads the due deliveries oldest first,
 * passes over a line whose head waits minutes or hours for its next attempt instead of reading
 * every delivery held behind it at each claim. It never makes one go sooner: a held delivery goes
 * only once its head is settled (`orderFree`), and the head's due time is when that can be at the
 * earliest. A held delivery never attempted takes the head's time either way (a head retried by
 * hand brings its line back with it); one with attempts of its own is only ever moved later, so
 * its own retry schedule still holds. Returns nothing; the rows changed are the statement's count.
 */
export function orderLinesMirror(table: string): string {
  // Each line's head once (its least id, from the ordering index alone), then its held deliveries
  // through the same index: linear in what is ordered and pending, never a look-up per pair.
  return `WITH line AS MATERIALIZED (
      SELECT first.k AS k, first.id AS id, head.next_attempt_at AS due FROM (
        SELECT ${K} AS k, min(id) AS id FROM ${table}
        WHERE ${K} IS NOT NULL AND status = 'pending' GROUP BY ${K}) AS first
      JOIN ${table} head ON head.id = first.id)
    UPDATE ${table} AS held SET next_attempt_at = line.due FROM line
    WHERE held.${K} = line.k AND held.status = 'pending' AND held.id > line.id
      AND held.next_attempt_at <> line.due AND (held.attempts = 0 OR line.due > held.next_attempt_at)`
}
