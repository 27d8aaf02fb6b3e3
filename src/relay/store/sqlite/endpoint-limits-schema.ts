// The per-URL limits' shared budget (docs/delivery-controls.md), one schema step of the SQLite
// store. Times are epoch ms; `tat` (the rate's theoretical arrival time) has fractions.

/** The SQLite step. */
export const SQLITE_ENDPOINT_LIMITS_STEP = `
  CREATE TABLE IF NOT EXISTS endpoint_budgets (
    url        TEXT    PRIMARY KEY,
    tat        REAL    NOT NULL DEFAULT 0,
    held_until INTEGER NOT NULL DEFAULT 0,
    rate_per_second REAL,      -- as configured, for the endpoints view (NULL: no rate)
    max_in_flight   INTEGER    -- as configured, for the endpoints view (NULL: no such limit)
  ) WITHOUT ROWID;
  CREATE TABLE IF NOT EXISTS endpoint_slots (
    url         TEXT    NOT NULL,
    owner       TEXT    NOT NULL,
    held        INTEGER NOT NULL,
    lease_until INTEGER NOT NULL,
    PRIMARY KEY (url, owner)
  ) WITHOUT ROWID;
`
