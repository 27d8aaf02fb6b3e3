// The violations table of tracking plans (docs/plans.md), one schema step in each store
// (appended to their MIGRATIONS). `IF NOT EXISTS` throughout: the step stands on its own, whichever
// other steps come before it. Times are epoch ms, as everywhere in the schema. Read newest first by
// id (the cursor), filtered by source, event and kind; pruned by time; erased by user.

/** The SQLite step. */
export const SQLITE_VIOLATIONS_STEP = `
  CREATE TABLE IF NOT EXISTS violations (
    id         INTEGER PRIMARY KEY,
    at         INTEGER NOT NULL,   -- epoch ms, when ingest found it
    source     TEXT    NOT NULL,
    message_id TEXT    NOT NULL,
    type       TEXT    NOT NULL,
    event      TEXT,
    kind       TEXT    NOT NULL,
    path       TEXT    NOT NULL,   -- a JSON Pointer into the message
    message    TEXT    NOT NULL,
    user_id    TEXT                -- the message's userId: an erasure deletes its violations
  );
  CREATE INDEX IF NOT EXISTS violations_source ON violations (source, event, id);
  CREATE INDEX IF NOT EXISTS violations_at ON violations (at);
  CREATE INDEX IF NOT EXISTS violations_user ON violations (user_id) WHERE user_id IS NOT NULL;
`

/** The PostgreSQL step. */
export const POSTGRES_VIOLATIONS_STEP = `
  CREATE TABLE IF NOT EXISTS violations (
    id         bigserial PRIMARY KEY,
    at         bigint    NOT NULL,
    source     text      NOT NULL,
    message_id text      NOT NULL,
    type       text      NOT NULL,
    event      text,
    kind       text      NOT NULL,
    path       text      NOT NULL,
    message    text      NOT NULL,
    user_id    text
  );
  CREATE INDEX IF NOT EXISTS violations_source ON violations (source, event, id);
  CREATE INDEX IF NOT EXISTS violations_at ON violations (at);
  CREATE INDEX IF NOT EXISTS violations_user ON violations (user_id) WHERE user_id IS NOT NULL;
`
