// The words of a delivery held back by a limited URL (docs/delivery-controls.md, "Seeing them"),
// in one place: the delivery log's `lastError` after a receiver's 429, and the `waiting` of a
// delivery the API and the page show while a URL's rate or requests in flight hold it.

import { burstMsOf, type EndpointLimitState, LIMIT_TIMINGS } from './endpoint-limits'

/** Why a delivery waits for a URL, for metrics: its rate, its requests in flight, or a hold. */
export type HeldReason = 'rate' | 'in_flight' | 'retry_after'

/** One URL holding a delivery back, and by what. */
export type Held =
  | { reason: 'rate'; url: string; ratePerSecond: number }
  | { reason: 'in_flight'; url: string; maxInFlight: number }
  | { reason: 'retry_after'; url: string; waitMs: number }

/** What the delivery log says of one URL holding a delivery back. Never an attempt. */
export function heldText(held: Held): string {
  switch (held.reason) {
    case 'rate':
      return `held: rate limit of ${held.ratePerSecond}/s on ${held.url}`
    case 'in_flight':
      return `held: ${held.maxInFlight} in flight on ${held.url}`
    case 'retry_after':
      return `held: receiver asked to retry after ${Math.ceil(held.waitMs / 1000)} s (429) on ${held.url}`
  }
}

/** What the delivery log says of every URL holding a delivery back. */
export function heldTexts(held: readonly Held[]): string {
  return held.map(heldText).join('; ')
}

/**
 * Why a due delivery to URLs in `states` waits now, as every relay sees their shared budget in
 * the store: a receiver's `Retry-After`, every slot of its requests in flight taken, or its rate
 * spent (less room left in the burst than the relays take at once). `undefined` when none holds
 * it back. Not an attempt: the delivery view shows it beside `lastError`.
 */
export function waitingText(states: readonly EndpointLimitState[], now: number): string | undefined {
  const held: Held[] = []
  for (const { url, heldUntil, inFlight, maxInFlight, ratePerSecond, tat } of states) {
    if (heldUntil > now) held.push({ reason: 'retry_after', url, waitMs: heldUntil - now })
    else if (maxInFlight !== undefined && inFlight >= maxInFlight) held.push({ reason: 'in_flight', url, maxInFlight })
    else if (ratePerSecond !== undefined && rateSpent(tat, ratePerSecond, now))
      held.push({ reason: 'rate', url, ratePerSecond })
  }
  return held.length === 0 ? undefined : heldTexts(held)
}

// A relay takes a chunk of the rate at once (or one request): with less room left in the burst
// than two of those (or than one request, for a burst of one), the relays are waiting for it.
function rateSpent(tat: number, ratePerSecond: number, now: number): boolean {
  const interval = 1000 / ratePerSecond
  const burst = burstMsOf(interval)
  const room = now + burst - Math.max(tat, now)
  return room < Math.min(burst, 2 * Math.max(interval, LIMIT_TIMINGS.tokenChunkMs))
}
