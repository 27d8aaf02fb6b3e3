// The suppressed users (docs/privacy.md, "Suppression"), one schema step of the SQLite store.
// `source` is '' for a suppression of every source (a key column cannot be NULL); the version row
// is bumped by every change in its transaction, and is what relays poll.

/** The SQLite step: times are epoch ms, as everywhere in the schema. */
export const SQLITE_SUPPRESSIONS_STEP = `
  CREATE TABLE IF NOT EXISTS suppressions (
    user_id TEXT    NOT NULL,
    source  TEXT    NOT NULL,   -- '': every source
    at      INTEGER NOT NULL,
    PRIMARY KEY (user_id, source)
  ) WITHOUT ROWID;
  CREATE TABLE IF NOT EXISTS suppression_version (
    id      INTEGER PRIMARY KEY CHECK (id = 1),
    version INTEGER NOT NULL
  );
  INSERT OR IGNORE INTO suppression_version (id, version) VALUES (1, 0);
`
