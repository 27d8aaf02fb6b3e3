/**
 * What kind of rule of a tracking plan a message broke (docs/plans.md):
 * - `unplanned`: a track event the plan does not list;
 * - `required`: a required property or trait is missing;
 * - `type`: a value of the wrong type;
 * - `additional`: a property or trait the schema does not allow (`additionalProperties: false`);
 * - `other`: any other rule (an enum, a pattern, a format, a range, …).
 */
export const VIOLATION_KINDS = ['unplanned', 'required', 'type', 'additional', 'other'] as const
export type ViolationKind = (typeof VIOLATION_KINDS)[number]

/** One violation of a tracking plan, as `GET /v1/violations` answers it. */
export interface Violation {
  /** When it was found (at ingest), ISO 8601 UTC. */
  at: string
  source: string
  messageId: string
  /** The message's type: `track`, `identify` or `group`. */
  type: string
  /** A track message's event name. */
  event?: string
  kind: ViolationKind
  /** A JSON Pointer into the message: `/properties/revenue`, `/traits/address/zip`, `/event`. */
  path: string
  /** What is wrong, in one sentence. */
  message: string
}

/** A violation to record: with the message's `userId`, kept so an erasure can find it, never shown. */
export interface NewViolation extends Violation {
  userId?: string | undefined
}

/** A search of the violations, newest first, a page at a time. */
export interface ViolationQuery {
  source?: string | undefined
  event?: string | undefined
  kind?: ViolationKind | undefined
  /** Found at or after this instant, epoch ms. */
  since?: number | undefined
  /** Where the page starts: the `next` of the previous page; the newest when absent. */
  cursor?: string | undefined
  limit: number
}

/** A page of violations, and the cursor of the next (absent on the last page). */
export interface ViolationPage {
  violations: Violation[]
  next?: string
}

/** How many violations one source's event (or call type) has of one kind, and when the newest was found. */
export interface ViolationCount {
  source: string
  type: string
  event?: string
  kind: ViolationKind
  count: number
  /** When the newest was found, ISO 8601 UTC. */
  lastAt: string
}

/**
 * The violations of tracking plans, kept in the relay's database for `retention` (every relay on
 * it sees all of them). Written by ingest with the messages they concern (`ingest/group-commit.ts`).
 */
export interface ViolationStore {
  /** Keeps `violations` (one transaction). */
  record(violations: readonly NewViolation[]): Promise<void>
  /**
   * A page of violations matching `query`, newest first.
   *
   * @throws {TypeError} when `query.cursor` is not a cursor this store gave.
   */
  find(query: ViolationQuery): Promise<ViolationPage>
  /** The counts per source, event (or call type) and kind, since `since` (epoch ms), the most recent first. */
  counts(since: number): Promise<ViolationCount[]>
  /** Deletes violations found before `before` (epoch ms), at most `limit` of them; returns how many went. */
  prune(before: number, limit: number): Promise<number>
  /** Deletes every violation of `userId`'s messages (an erasure); returns how many went. */
  eraseUser(userId: string): Promise<number>
}
