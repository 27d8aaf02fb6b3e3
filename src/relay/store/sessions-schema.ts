// The operator page's sessions table, one schema step in each store (appended to their
// MIGRATIONS). `IF NOT EXISTS` throughout: the step stands on its own, whichever other steps come
// before it, so branches that each append a step merge in either order.

/** The SQLite step: times are epoch ms, as everywhere in the schema. */
export const SQLITE_SESSIONS_STEP = `
  CREATE TABLE IF NOT EXISTS sessions (
    token_digest TEXT    PRIMARY KEY,  -- SHA-256 of the cookie's token (base64url); never the token
    created_at   INTEGER NOT NULL,     -- epoch ms; it ends SESSION_MAX_MS after this
    last_seen_at INTEGER NOT NULL      -- epoch ms; it ends SESSION_IDLE_MS after this
  ) WITHOUT ROWID;
  CREATE INDEX IF NOT EXISTS sessions_created ON sessions (created_at);
`

/** The PostgreSQL step. */
export const POSTGRES_SESSIONS_STEP = `
  CREATE TABLE IF NOT EXISTS sessions (
    token_digest text   PRIMARY KEY,  -- SHA-256 of the cookie's token (base64url); never the token
    created_at   bigint NOT NULL,     -- epoch ms; it ends SESSION_MAX_MS after this
    last_seen_at bigint NOT NULL      -- epoch ms; it ends SESSION_IDLE_MS after this
  );
  CREATE INDEX IF NOT EXISTS sessions_created ON sessions (created_at);
`
