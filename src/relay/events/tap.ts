import type { Refusal } from './kinds'

/**
 * What hears of each message of an ingest request as ingest judges it (the live stream). Asked
 * first whether it listens at all: when not, ingest tells it nothing and builds nothing for it.
 * Must not throw.
 */
export interface IngestTap {
  /** Whether anyone hears: read once per request. */
  readonly listening: boolean
  /**
   * `message` was accepted (as stored: with its `messageId`, `timestamp`, `receivedAt`);
   * `blocked` when the source's schema blocks it, so no delivery was written (a string: why);
   * `withheld`: the destinations it would have gone to that got no delivery of it, each with why
   * (a consent rule: docs/privacy.md).
   */
  accepted(
    source: string,
    message: Readonly<Record<string, unknown>>,
    blocked: boolean | string,
    withheld?: ReadonlyMap<string, string>,
  ): void
  /** A message of the request was refused on its own (`raw` as sent). */
  refused(source: string, refusal: Refusal, raw: unknown): void
}
