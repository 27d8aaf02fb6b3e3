import type { DeliveryRoute } from './circuits'

// What the outbox is asked for by claims and filters, apart from store.ts so that the store's
// smaller interfaces (replays.ts) can name them without importing the Store they are part of.

/** What `Store.claim` is asked for. */
export interface ClaimRequest {
  source: string
  limit: number
  /** The claiming relay's id. */
  owner: string
  /** How long the lease holds from the claim, ms (by the store's clock). */
  leaseMs: number
}

/** Where a delivery stands: waiting for (another) attempt, done, or dead-lettered. */
export type DeliveryStatus = 'pending' | 'delivered' | 'failed' | 'filtered'

/**
 * Which deliveries a search or a bulk replay is about: every field given must match (none given:
 * every delivery).
 */
export interface DeliveryFilter {
  status?: DeliveryStatus | undefined
  source?: string | undefined
  /** The message's `messageId`, exactly. */
  messageId?: string | undefined
  /** The message's `userId`, exactly (kept for deliveries written by this version on). */
  userId?: string | undefined
  /** A `track` message's `event`, exactly (kept for deliveries written by this version on). */
  event?: string | undefined
  /** The message's `type` (`track`, `identify`, …). */
  type?: string | undefined
  /**
   * The deliveries to one webhook URL: the routes (source and destination) configured to send
   * there. The store does not know the configuration, so the caller (the admin API) resolves a
   * `url` to these; an empty list matches nothing. Routes rather than the attempts' URLs, so that
   * a delivery that never had an attempt (parked behind an open circuit, then dead-lettered) is
   * found too.
   */
  routes?: readonly DeliveryRoute[] | undefined
  /** Written at or after this instant, epoch ms. */
  since?: number | undefined
  /** Written at or before this instant, epoch ms. */
  until?: number | undefined
}
