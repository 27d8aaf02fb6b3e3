// What telemetry reads out for the other areas: the console's page shows both.

/**
 * The kinds of store writes the health check watches, by what they write:
 * - `deliveries`: new or re-queued deliveries (ingest, deletions, audience syncs, retries by hand);
 * - `outcomes`: the results of attempts;
 * - `claims`: claims and leases of due deliveries;
 * - `retention`: pruning of old delivered deliveries.
 */
export type WriteKind = 'deliveries' | 'outcomes' | 'claims' | 'retention'

/** What `/healthz` answers: 200 with `{ ok: true }`, or 503 with why. */
export type HealthReport = (
  | { ok: true }
  | {
      ok: false
      /** One sentence, such as `the store refuses writes of outcomes: database or disk is full`. */
      reason: string
      /** Every kind of write failing now, with its last error and since when (ISO time). */
      failing: { writes: WriteKind; error: string; since: string }[]
    }
) & {
  /**
   * The API sources the relay cannot decrypt and does not serve (absent when none). They do not
   * turn the answer to 503: every other source is served (docs/operations.md).
   */
  unreadableSources?: { name: string; error: string }[]
}

/** Events per minute over the last {@link RecentRates.minutes} minutes, for the operator page. */
export interface RecentRates {
  ingested: number
  delivered: number
  retried: number
  deadLettered: number
  minutes: number
}

/** One minute of the relay's work, for the overview's charts. */
export interface MinuteReading {
  /** The minute's start, epoch ms. */
  at: number
  /** Messages accepted by ingest. */
  ingested: number
  /** Deliveries delivered. */
  delivered: number
  /** Deliveries dead-lettered. */
  deadLettered: number
  /** The 99th percentile of the minute's attempt times, ms; `undefined` for a minute with no attempt. */
  p99Ms: number | undefined
}

/** The last {@link LAST_HOUR_MINUTES} minutes, oldest first, the current (partial) minute last. */
export type LastHour = readonly MinuteReading[]

/** How many minutes the overview's charts show. */
export const LAST_HOUR_MINUTES = 60
