// A slot of a URL's requests in flight is leased in the store, so that a relay killed while
// holding it gives it back. A request lasts at most `webhookTimeout` (to its answer's headers) and
// the short read of a failed answer's start: twice that and five seconds more is never too short.
const SLOT_LEASE_GRACE_MS = 5000

/** How long a slot taken for one request is leased, ms, for a relay whose requests time out after `webhookTimeout`. */
export function slotLeaseMs(webhookTimeout: number): number {
  return 2 * webhookTimeout + SLOT_LEASE_GRACE_MS
}
