// Replays from the archive and the erasures they skip (docs/replay.md, "From the archive"): one
// schema step in each store, appended to their MIGRATIONS, standing on its own.
//
// - replays.archive_position: where a replay from the archive stands in its files (JSON, as the
//   replay feature writes it; '' before its first step); NULL for a replay of the outbox.
// - erasures: every user erased by `POST /v1/deletions`, kept for good (a replay from the archive
//   skips them: the files still hold their messages).

/** The SQLite step. */
export const SQLITE_ARCHIVE_REPLAYS_STEP = `
  ALTER TABLE replays ADD COLUMN archive_position TEXT;
  CREATE TABLE erasures (
    user_id   TEXT    PRIMARY KEY,
    erased_at INTEGER NOT NULL  -- epoch ms, the first erasure
  );
`

/** The PostgreSQL step. */
export const POSTGRES_ARCHIVE_REPLAYS_STEP = `
  ALTER TABLE replays ADD COLUMN archive_position text;
  CREATE TABLE erasures (
    user_id   text   PRIMARY KEY,
    erased_at bigint NOT NULL  -- epoch ms, the first erasure
  );
`
