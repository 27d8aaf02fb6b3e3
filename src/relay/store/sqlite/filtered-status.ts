// The `filtered` status (a delivery its destination's function dropped: docs/functions.md), in a
// migration of its own so that it merges beside other schema work. SQLite cannot alter a CHECK,
// and migrations run in a transaction, where foreign keys cannot be turned off: both tables are
// rebuilt (the attempts' foreign key follows a renamed table), same columns in the same order,
// and their indexes made again.
export const FILTERED_STATUS_MIGRATION = `
  ALTER TABLE deliveries RENAME TO deliveries_old;
  CREATE TABLE deliveries (
    id               INTEGER PRIMARY KEY,
    source           TEXT    NOT NULL,
    destination      TEXT    NOT NULL,
    message_id       TEXT    NOT NULL,
    type             TEXT    NOT NULL,
    message          TEXT    NOT NULL,
    status           TEXT    NOT NULL CHECK (status IN ('pending', 'delivered', 'failed', 'filtered')),
    attempts         INTEGER NOT NULL DEFAULT 0,
    first_attempt_at INTEGER,
    next_attempt_at  INTEGER NOT NULL,
    last_error       TEXT,
    created_at       INTEGER NOT NULL,
    updated_at       INTEGER NOT NULL,
    lease_until      INTEGER,
    lease_owner      TEXT,
    user_id          TEXT,
    event            TEXT,
    paused_at        INTEGER
  );
  INSERT INTO deliveries SELECT * FROM deliveries_old;
  ALTER TABLE attempts RENAME TO attempts_old;
  CREATE TABLE attempts (
    id              INTEGER PRIMARY KEY,
    delivery_id     INTEGER NOT NULL REFERENCES deliveries (id),
    at              INTEGER NOT NULL,
    url             TEXT    NOT NULL,
    status          INTEGER,
    error           TEXT,
    ms              INTEGER NOT NULL,
    response_body   TEXT,
    request_headers TEXT
  );
  INSERT INTO attempts SELECT * FROM attempts_old;
  DROP TABLE attempts_old;
  DROP TABLE deliveries_old;
  CREATE UNIQUE INDEX deliveries_message_route ON deliveries (message_id, source, destination);
  CREATE INDEX deliveries_due ON deliveries (source, next_attempt_at) WHERE status = 'pending';
  CREATE INDEX deliveries_status ON deliveries (status, id);
  CREATE INDEX deliveries_delivered ON deliveries (updated_at) WHERE status = 'delivered';
  CREATE INDEX deliveries_user ON deliveries (user_id) WHERE user_id IS NOT NULL;
  CREATE INDEX attempts_delivery ON attempts (delivery_id);
  CREATE INDEX attempts_url ON attempts (url, at);
`
