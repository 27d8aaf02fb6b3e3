// A replay picks original deliveries by time (docs/replay.md: its `since` and `until` are always
// given), but the deliveries table had no index on created_at: counting a day's originals read
// every row of the file (186–275 ms among 1,000,000 deliveries, `node bench/store-search.mjs
// --store sqlite`), in the write transaction that starts the replay. Originals only, and no status
// in the key: an outcome changes no column of it, so the index costs one entry at ingest (created
// times grow, so it is appended at the right edge) and none when a delivery settles.
// A step of its own, so that it merges beside other schema work.
export const SQLITE_ORIGINALS_TIME_STEP = `
  CREATE INDEX IF NOT EXISTS deliveries_originals_time ON deliveries (created_at)
    WHERE replay_of IS NULL AND erased_at IS NULL;
`
