// Replays (docs/replay.md), one schema step in each store (appended to their MIGRATIONS), standing
// on its own whichever steps come before it.
//
// - deliveries.replay_of: the original delivery a replay delivery re-sends (NULL: an original,
//   written by ingest); replay_id: the replay that made it; erased_at: its user's data was erased.
// - The duplicate check (a client sending a batch again) applies to ingest only: the unique index
//   keeps its name and its leading columns (it serves searches by message id too) and gains the
//   replay's id, 0 for an original, so a replay's copy of a message is never taken for a duplicate.
// - The replay claim reads its own small partial index; the counts read deliveries by replay.
// - replays: one row per replay, with its filter (JSON), target, pace and progress. `cursor` is the
//   last original id queued (originals are queued in id order up to `up_to`, the newest id when it
//   started); `next_at` is when its pace lets it queue again (epoch ms, the store's clock).

const REPLAY_INDEXES = `
  CREATE INDEX deliveries_replay_due ON deliveries (source, next_attempt_at)
    WHERE status = 'pending' AND replay_of IS NOT NULL;
  CREATE INDEX deliveries_replay ON deliveries (replay_id, status) WHERE replay_id IS NOT NULL;
`

/** The SQLite step. */
export const SQLITE_REPLAYS_STEP = `
  ALTER TABLE deliveries ADD COLUMN replay_of INTEGER;
  ALTER TABLE deliveries ADD COLUMN replay_id INTEGER;
  ALTER TABLE deliveries ADD COLUMN erased_at INTEGER;
  DROP INDEX deliveries_message_route;
  CREATE UNIQUE INDEX deliveries_message_route ON deliveries (message_id, source, destination, coalesce(replay_id, 0));
  ${REPLAY_INDEXES}
  CREATE TABLE replays (
    id         INTEGER PRIMARY KEY,
    state      TEXT    NOT NULL CHECK (state IN ('running', 'paused', 'done', 'cancelled')),
    filter     TEXT    NOT NULL,  -- JSON: the delivery filter
    target_url TEXT,              -- one URL of the destination; NULL: all of them
    rate       REAL    NOT NULL,  -- new deliveries per second at most
    matched    INTEGER NOT NULL,
    queued     INTEGER NOT NULL DEFAULT 0,
    cursor     INTEGER NOT NULL DEFAULT 0,
    up_to      INTEGER NOT NULL,
    next_at    INTEGER NOT NULL,  -- epoch ms
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
  );
  CREATE INDEX replays_running ON replays (next_at) WHERE state = 'running';
`

/** The PostgreSQL step. */
export const POSTGRES_REPLAYS_STEP = `
  ALTER TABLE deliveries
    ADD COLUMN replay_of bigint,
    ADD COLUMN replay_id bigint,
    ADD COLUMN erased_at bigint;
  DROP INDEX deliveries_message_route;
  CREATE UNIQUE INDEX deliveries_message_route ON deliveries (message_id, source, destination, (coalesce(replay_id, 0)));
  ${REPLAY_INDEXES}
  CREATE TABLE replays (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    state      text    NOT NULL CHECK (state IN ('running', 'paused', 'done', 'cancelled')),
    filter     text    NOT NULL,  -- JSON: the delivery filter
    target_url text,              -- one URL of the destination; NULL: all of them
    rate       float8  NOT NULL,  -- new deliveries per second at most
    matched    bigint  NOT NULL,
    queued     bigint  NOT NULL DEFAULT 0,
    cursor     bigint  NOT NULL DEFAULT 0,
    up_to      bigint  NOT NULL,
    next_at    bigint  NOT NULL,  -- epoch ms
    created_at bigint  NOT NULL,
    updated_at bigint  NOT NULL
  );
  CREATE INDEX replays_running ON replays (next_at) WHERE state = 'running';
`
