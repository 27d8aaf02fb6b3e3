/**
 * Who sends the next `delivery.failed` alert of an endpoint (docs/operations.md, "Alerts"), kept
 * in the store so that every relay sharing it agrees: at most one notice a minute per endpoint,
 * however many relays dead-letter its deliveries, each with the count of dead letters since the
 * last. The relays' clocks are taken to agree to within seconds (a PostgreSQL relay's offset to
 * the database's clock is a metric, `tracklet_clock_offset_seconds`).
 */
export interface AlertClaimStore {
  /**
   * A delivery to `url` was dead-lettered at `now` (epoch ms). When no notice of `url` went out
   * in the last `intervalMs`, this call claims the next: it returns `claimed` with the count to
   * send (this dead letter, and those counted since the last notice). Otherwise the dead letter is
   * counted for the next notice, due at `nextAt`.
   */
  deadLettered(url: string, now: number, intervalMs: number): Promise<AlertClaim>

  /**
   * At `now`, past the `nextAt` a {@link deadLettered} call returned: claims the notice of the dead
   * letters counted since the last, if any are and no other relay claimed it first.
   */
  flush(url: string, now: number, intervalMs: number): Promise<AlertClaim>

  /**
   * Deletes the rows of endpoints whose last notice was due before `before` (epoch ms) and that
   * owe none: retention's sweep calls it, so an endpoint that failed once is not kept for ever.
   * Resolves with how many went.
   */
  prune(before: number): Promise<number>
}

/** What a claim came to: a notice to send now with its count, or none until `nextAt` (epoch ms). */
export type AlertClaim = { claimed: true; count: number } | { claimed: false; nextAt: number }

/** A row of the claims as both stores return it. */
export interface AlertClaimRow {
  claim: string
  count: number | string
  next_at: number | string
}

/** A row of {@link AlertClaimRow} (or none: nothing to send) as {@link AlertClaim}, for the caller that wrote `token`. */
export function toAlertClaim(row: AlertClaimRow | undefined, token: string, now: number): AlertClaim {
  if (row === undefined) return { claimed: false, nextAt: now }
  if (row.claim === token) return { claimed: true, count: Number(row.count) }
  return { claimed: false, nextAt: Number(row.next_at) }
}

// The table, one schema step in each store (appended to their MIGRATIONS). A row per endpoint
// that ever dead-lettered: `pending` counts the dead letters since the last notice, `next_at` is
// when the next may go, `claim` the token of the call that claimed the last and `count` what it sent.

/** The SQLite step. */
export const SQLITE_ALERT_CLAIMS_STEP = `
  CREATE TABLE IF NOT EXISTS alert_claims (
    url     TEXT    PRIMARY KEY,
    pending INTEGER NOT NULL,
    next_at INTEGER NOT NULL,  -- epoch ms
    claim   TEXT    NOT NULL,
    count   INTEGER NOT NULL
  ) WITHOUT ROWID;
`

/** The PostgreSQL step. */
export const POSTGRES_ALERT_CLAIMS_STEP = `
  CREATE TABLE IF NOT EXISTS alert_claims (
    url     text    PRIMARY KEY,
    pending integer NOT NULL,
    next_at bigint  NOT NULL,  -- epoch ms
    claim   text    NOT NULL,
    count   integer NOT NULL
  );
`

/**
 * The two statements, the same in both dialects but for parameters (`:name` here; each store
 * binds its own way). In an UPDATE every right-hand side reads the row as it was, so the claim,
 * its count and the reset of `pending` are decided together, in one statement, with no race.
 */
export const ALERT_CLAIM_SQL = {
  deadLettered: `INSERT INTO alert_claims (url, pending, next_at, claim, count)
    VALUES (:url, 0, :now + :interval, :token, 1)
    ON CONFLICT (url) DO UPDATE SET
      claim   = CASE WHEN alert_claims.next_at <= :now THEN :token ELSE alert_claims.claim END,
      count   = CASE WHEN alert_claims.next_at <= :now THEN alert_claims.pending + 1 ELSE alert_claims.count END,
      pending = CASE WHEN alert_claims.next_at <= :now THEN 0 ELSE alert_claims.pending + 1 END,
      next_at = CASE WHEN alert_claims.next_at <= :now THEN :now + :interval ELSE alert_claims.next_at END
    RETURNING claim, count, next_at`,
  flush: `UPDATE alert_claims SET claim = :token, count = pending, pending = 0, next_at = :now + :interval
    WHERE url = :url AND next_at <= :now AND pending > 0
    RETURNING claim, count, next_at`,
  // A row with dead letters still counted waits for its flush, however old.
  prune: 'DELETE FROM alert_claims WHERE next_at < :before AND pending = 0',
}
