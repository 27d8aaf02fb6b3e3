import { ORDER_INDEX_COLUMNS, ORDER_KEY_COLUMN } from '../ordering/order-hold'

// Ordered delivery per user (docs/delivery-controls.md, "Ordering") on SQLite: a nullable key on
// the delivery (adding it rewrites no row) and its partial index, which holds only the pending
// deliveries of ordered destinations: empty while none is ordered.

/** The SQLite step. */
export const SQLITE_ORDERING_STEP = `
  ALTER TABLE deliveries ADD COLUMN ${ORDER_KEY_COLUMN} TEXT;
  CREATE INDEX IF NOT EXISTS deliveries_order ON deliveries ${ORDER_INDEX_COLUMNS};
`
