// The `console` lines a destination's function printed during an attempt (docs/functions.md), kept
// with the attempt: a JSON array of strings, NULL when it printed nothing. An additive step of its
// own per store so that it merges beside other schema work. An attempt that a function ended
// before any request (filtered, retried, dead-lettered) has one row with an empty `url`.

/** The SQLite step. */
export const SQLITE_ATTEMPT_CONSOLE_STEP = 'ALTER TABLE attempts ADD COLUMN console TEXT;'

/** The PostgreSQL step. */
export const POSTGRES_ATTEMPT_CONSOLE_STEP = 'ALTER TABLE attempts ADD COLUMN console text;'
