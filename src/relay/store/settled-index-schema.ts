// Retention prunes filtered deliveries (dropped by a destination's function: docs/functions.md) as
// it prunes delivered ones: the partial index the prune reads now covers both statuses. A step of
// its own per store (same SQL on both), so that it merges beside other schema work; the prune
// statements name the same two statuses (SETTLED_STATUSES_SQL), so each store plans it with this index.

/** The statuses retention prunes, as the prune statements and the index's predicate spell them. */
export const SETTLED_STATUSES_SQL = "status IN ('delivered', 'filtered')"

/** The step, on SQLite and PostgreSQL alike. */
export const SETTLED_INDEX_STEP = `
  CREATE INDEX IF NOT EXISTS deliveries_settled ON deliveries (updated_at) WHERE ${SETTLED_STATUSES_SQL};
  DROP INDEX IF EXISTS deliveries_delivered;
`
