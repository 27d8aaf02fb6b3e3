// Which token signed a session in (`admin` or `read`), one additive schema step in each store.
// Sessions written before it, or by a relay of the previous version during a rolling upgrade, were
// all signed in with the admin token (the only one the page took then), hence the default.

/** The SQLite step. */
export const SQLITE_SESSION_ROLE_STEP = `
  ALTER TABLE sessions ADD COLUMN role TEXT NOT NULL DEFAULT 'admin' CHECK (role IN ('admin', 'read'));
`

/** The PostgreSQL step. */
export const POSTGRES_SESSION_ROLE_STEP = `
  ALTER TABLE sessions ADD COLUMN IF NOT EXISTS role text NOT NULL DEFAULT 'admin' CHECK (role IN ('admin', 'read'));
`
