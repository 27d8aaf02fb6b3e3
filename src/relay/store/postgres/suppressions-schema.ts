// The suppressed users (docs/privacy.md, "Suppression"), one schema step of the PostgreSQL store.
// `source` is '' for a suppression of every source (a key column cannot be NULL); the version row
// is bumped by every change in its transaction (its row lock makes writers take turns), and is
// what relays poll when a notification is lost.

/** The PostgreSQL step. */
export const POSTGRES_SUPPRESSIONS_STEP = `
  CREATE TABLE IF NOT EXISTS suppressions (
    user_id text   NOT NULL,
    source  text   NOT NULL,   -- '': every source
    at      bigint NOT NULL,
    PRIMARY KEY (user_id, source)
  );
  CREATE TABLE IF NOT EXISTS suppression_version (
    id      integer PRIMARY KEY CHECK (id = 1),
    version bigint  NOT NULL
  );
  INSERT INTO suppression_version (id, version) VALUES (1, 0) ON CONFLICT (id) DO NOTHING;
`
