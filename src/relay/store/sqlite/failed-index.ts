// One index entry fewer for every message ingested, as PostgreSQL's schema 5 did (docs/postgres.md):
// a status index over every delivery took an entry at ingest and another at each outcome. Only dead
// letters (few) keep one now; pending deliveries are found through deliveries_due, delivered ones
// (most) by id. A step of its own, so that it merges beside other schema work.
export const SQLITE_FAILED_INDEX_STEP = `
  DROP INDEX deliveries_status;
  CREATE INDEX deliveries_failed ON deliveries (id) WHERE status = 'failed';
`
