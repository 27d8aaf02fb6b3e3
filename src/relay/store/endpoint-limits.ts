// The shared budget of the per-URL limits (docs/delivery-controls.md): every relay and worker on
// one database takes its sending rate and its requests in flight for a URL from here, so the
// limits hold across them all. Each operation is one atomic step (a transaction, or one call of a
// database function), judged by the store's own clock: relays whose clocks differ still agree.

/** The timings of the limits (docs/delivery-controls.md, "What they cost"), ms. */
export const LIMIT_TIMINGS = Object.freeze({
  /**
   * How much of its rate a relay takes from the store at once: 20 ms' worth (at least one). Less
   * is more round trips; more is a larger burst left unused when the demand stops.
   */
  tokenChunkMs: 20,
  /** The burst every relay together may send: one second's worth. */
  burstMs: 1000,
  /** Requests of the rate taken and not used by then are dropped (the store counted them). */
  tokenLifeMs: 1000,
  /** A URL whose slots are all taken (by any relay) is asked again this often. */
  slotRetryMs: 25,
  /** A slot taken for a delivery that went elsewhere meanwhile is given back after this long. */
  unusedSlotMs: 1000,
  /** A slot is kept for the next delivery waiting at most this long after it was leased. */
  keepSlotMs: 1000,
})

/**
 * The burst every relay together may send to a URL limited to one request every `intervalMs`:
 * one second's worth, and never less than one request (a rate below 1 a second has less than one
 * in a second, and would never send).
 */
export function burstMsOf(intervalMs: number): number {
  return Math.max(LIMIT_TIMINGS.burstMs, intervalMs)
}

/** What {@link EndpointLimitStore.takeTokens} answers. */
export interface TokenGrant {
  /** How many requests may go now (0 to the number asked for). */
  granted: number
  /** With none granted: how long until one may be, ms (the rate's next slot, or a hold's end). */
  waitMs: number
  /** The URL is held by its receiver's `Retry-After` for this long, ms (0: not held). */
  heldMs: number
}

/** What {@link EndpointLimitStore.takeSlots} answers. */
export interface SlotGrant {
  /** How many slots were taken (0 to the number asked for): requests in flight, counted for every relay. */
  taken: number
  /** The URL is held by its receiver's `Retry-After` for this long, ms (0: not held). */
  heldMs: number
}

/** One URL's shared state, as the endpoints view shows it. */
export interface EndpointLimitState {
  url: string
  /** As the relays last declared it. */
  ratePerSecond: number | undefined
  maxInFlight: number | undefined
  /** Requests in flight to it now, every relay's (slots whose lease has not run out). */
  inFlight: number
  /** Until when its receiver's `Retry-After` holds it, epoch ms by the store's clock (0: not held). */
  heldUntil: number
  /** The rate's theoretical arrival time ({@link gcra}), epoch ms by the store's clock (0: never taken). */
  tat: number
}

/**
 * The per-URL budgets, shared by every relay on the database: a rate as a generic cell rate
 * (GCRA: one "theoretical arrival time" per URL, advanced by each request granted, never more
 * than a burst ahead of the clock), slots for requests in flight (one row per URL and relay, with
 * a lease, so a relay that dies gives its slots back when the lease runs out), and a hold set by
 * a receiver's `429` with `Retry-After`.
 */
export interface EndpointLimitStore {
  /**
   * Takes up to `want` requests of the URL's rate, one every `intervalMs`, at most `burstMs` ahead
   * of the clock (a burst of `burstMs / intervalMs`). None while the URL is held.
   */
  takeTokens(url: string, want: number, intervalMs: number, burstMs: number): Promise<TokenGrant>

  /**
   * Takes up to `want` slots of the URL's `max` requests in flight for `owner`, as many as every
   * relay together leaves free; `owner`'s slots of the URL are leased for `leaseMs` from now. None
   * while the URL is held.
   */
  takeSlots(url: string, owner: string, max: number, want: number, leaseMs: number): Promise<SlotGrant>

  /** Gives back `count` of `owner`'s slots of the URL (its requests ended). */
  returnSlots(url: string, owner: string, count: number): Promise<void>

  /** Holds the URL for `ms` from now (a receiver's `Retry-After`): no relay sends there meanwhile. */
  hold(url: string, ms: number): Promise<void>

  /**
   * Puts deliveries leased to `owner` back in the outbox, due in `waitMs`, without counting an
   * attempt, showing `error` in the delivery log meanwhile; their leases end. Returns the ids.
   */
  defer(owner: string, ids: readonly number[], waitMs: number, error: string): Promise<number[]>

  /** Records each URL's limits as configured, for the endpoints view of every relay. */
  declare(limits: ReadonlyMap<string, { ratePerSecond?: number; maxInFlight?: number }>): Promise<void>

  /** The shared state of these URLs (those never limited have none). */
  read(urls: readonly string[]): Promise<EndpointLimitState[]>
}

/**
 * The grant of up to `want` requests under a GCRA whose theoretical arrival time is `tat`, at
 * `now`: what both dialects compute (SQLite in the relay, PostgreSQL in its function, the same
 * arithmetic). `tat` is the new one to store.
 */
export function gcra(
  tat: number,
  now: number,
  want: number,
  intervalMs: number,
  burstMs: number,
): { granted: number; tat: number; waitMs: number } {
  const base = Math.max(tat, now)
  const room = Math.floor((now + burstMs - base) / intervalMs)
  const granted = Math.max(0, Math.min(want, room))
  if (granted > 0) return { granted, tat: base + granted * intervalMs, waitMs: 0 }
  return { granted: 0, tat, waitMs: Math.max(1, Math.ceil(base + intervalMs - burstMs - now)) }
}
