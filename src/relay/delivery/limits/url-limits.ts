import { redactUrl } from '../../../shared/redact-url'
import type { DeliveryAttempt } from '../../../webhooks/index'
import type { TargetLimits } from '../../destinations/destination'
import { log } from '../../log'
import { burstMsOf, type EndpointLimitStore, LIMIT_TIMINGS } from '../../store/endpoint-limits'
import type { EndpointLimitSnapshot } from '../../store/circuit-snapshot'
import { type Deferral, isHoldRequest } from './hold'
import { type Held, type HeldReason, heldTexts } from '../../store/endpoint-held'

/** What a worker's limits need. */
export interface UrlLimitsOptions {
  /** The shared budget. */
  store: EndpointLimitStore
  /** The worker's owner id: its slots are kept under it. */
  owner: string
  /** How long a slot taken is leased, ms: a relay that dies gives its slots back after it. */
  slotLeaseMs: number
  /** Each limited URL's limits (updated in place when the sources change). */
  limits: ReadonlyMap<string, TargetLimits>
  /** A URL may have room again: the lanes waiting for it look again. */
  resume(url: string): void
  /** A store operation ended: the worker may have become idle. */
  settled(): void
  /**
   * The deliveries the worker holds and has not started (claimed, or a probe waiting for room):
   * only these can be waiting. One that left by any other path (parked, dead-lettered, filtered
   * by its step, given back) is no longer counted.
   */
  queued(): ReadonlySet<number>
  now?: () => number
}

/** One limited URL, as this relay sees it (for metrics and the endpoints view). */
export interface UrlLimitSnapshot extends EndpointLimitSnapshot {
  url: string
}

const TOKEN_CHUNK_MS = LIMIT_TIMINGS.tokenChunkMs
const TOKEN_LIFE_MS = LIMIT_TIMINGS.tokenLifeMs
const SLOT_RETRY_MS = LIMIT_TIMINGS.slotRetryMs
const UNUSED_SLOT_MS = LIMIT_TIMINGS.unusedSlotMs

interface UrlState {
  /** Requests of the rate taken from the store and not used yet. */
  tokens: number
  /** When those tokens were taken (monotonic ms): they are dropped after TOKEN_LIFE_MS. */
  tokensAt: number
  /** Slots taken from the store and not used yet. */
  slots: number
  /** When this relay's slots of the URL were last leased (monotonic ms). */
  slotsAt: number
  /** This relay's requests in flight. */
  inFlight: number
  /** Until when the URL is held (this relay's clock, epoch ms). */
  heldUntil: number
  takingTokens: boolean
  takingSlot: boolean
  /** Slots to give back to the store, and whether a call giving some back is under way. */
  toReturn: number
  returning: boolean
  timer: NodeJS.Timeout | undefined
  /** When that timer fires (monotonic ms). */
  timerAt: number
  /** Returns slots taken and left unused (the deliveries that wanted them went elsewhere). */
  idleTimer: NodeJS.Timeout | undefined
  /** Deliveries waiting for room, by id. */
  waiting: Set<number>
  held: Record<HeldReason, number>
}

/**
 * The per-URL limits of one worker (docs/delivery-controls.md): before a delivery to a limited URL
 * is sent, one request of the URL's rate and one slot of its requests in flight are taken from
 * the store's shared budget. `admit` answers at once from what this relay already took, and takes
 * more from the store in the background when it lacks some; the worker is told to look again when
 * it has.
 */
export class UrlLimits {
  readonly #options: UrlLimitsOptions
  readonly #now: () => number
  readonly #state = new Map<string, UrlState>()
  /** Store operations under way: the worker is not idle meanwhile. */
  #busy = 0
  #stopped = false

  constructor(options: UrlLimitsOptions) {
    this.#options = options
    this.#now = options.now ?? Date.now
  }

  /** Records the limits as configured in the store, for every relay's endpoints view. */
  declare(): void {
    if (this.#options.limits.size === 0) return
    this.#run(this.#options.store.declare(new Map(this.#options.limits)), 'record the limits of', 'its URLs', () => {})
  }

  /** Every URL it limits. */
  get limits(): ReadonlyMap<string, TargetLimits> {
    return this.#options.limits
  }

  /** Work is under way that the worker's `idle()` should wait for. */
  get busy(): boolean {
    return this.#busy > 0
  }

  /**
   * Takes room for delivery `id` on every limited URL of `urls` (all or none): `undefined` when it
   * may go, else why it waits (the worker is told through `resume` when to look again). `behind`:
   * the deliveries that wait behind it when it waits (its destination's next ones), for the count.
   */
  admit(id: number, urls: readonly string[], behind: () => readonly number[] = () => []): string | undefined {
    const limited = urls.filter((url) => this.#options.limits.has(url))
    if (limited.length === 0) return undefined
    const now = this.#now()
    const waits: Held[] = []
    for (const url of limited) {
      const why = this.#lacks(url, now)
      if (why === undefined) continue
      waits.push(why)
      const state = this.#stateOf(url)
      for (const waiting of [id, ...behind()]) {
        if (state.waiting.has(waiting)) continue
        state.waiting.add(waiting)
        state.held[why.reason]++
      }
    }
    if (waits.length > 0) return heldTexts(waits)
    for (const url of limited) {
      const limits = this.#options.limits.get(url)!
      const state = this.#stateOf(url)
      state.waiting.delete(id)
      if (limits.ratePerSecond !== undefined) state.tokens--
      if (limits.maxInFlight !== undefined) state.slots--
      state.inFlight++
    }
    return undefined
  }

  /**
   * The requests of an admitted delivery to `urls` ended with `requests`: gives their slots back
   * and holds each URL whose receiver answered 429 with a `Retry-After`. Never throws.
   */
  release(urls: readonly string[], requests: readonly DeliveryAttempt[]): void {
    for (const request of requests) {
      if (isHoldRequest(request, this.#options.limits)) this.#hold(request.url, request.retryAfterMs!)
    }
    for (const url of urls) {
      const limits = this.#options.limits.get(url)
      const state = this.#state.get(url)
      if (limits === undefined || state === undefined) continue
      state.inFlight = Math.max(0, state.inFlight - 1)
      if (limits.maxInFlight === undefined) continue
      // Kept for the next delivery, while its lease is young: no round trip (unused, it goes back
      // after UNUSED_SLOT_MS). Given back otherwise, so that another relay may take it.
      if (performance.now() - state.slotsAt < this.#keepSlotsMs()) {
        state.slots++
        this.#returnUnused(url)
        if (state.waiting.size > 0) this.#options.resume(url)
        continue
      }
      this.#giveBack(url, state, 1)
    }
  }

  /**
   * Puts delivery `id` back in the outbox as `deferral` says (a receiver's hold), without an
   * attempt. Resolves when the store has it (or could not: its lease then runs out). Never rejects.
   */
  async deferStore(owner: string, id: number, deferral: Deferral): Promise<void> {
    this.#busy++
    try {
      await this.#options.store.defer(owner, [id], deferral.waitMs, deferral.error)
    } catch (error) {
      log.error(`could not put delivery ${id} back after a 429: ${(error as Error).message}`, {
        event: 'endpoint-limits-failed',
        deliveryId: id,
      })
    } finally {
      this.#busy--
    }
  }

  /** The requests of a 429 not counted by the breaker: they are a hold, not a failure. */
  forBreaker(requests: readonly DeliveryAttempt[]): DeliveryAttempt[] {
    return requests.filter((request) => !isHoldRequest(request, this.#options.limits))
  }

  /** Each limited URL as this relay sees it. */
  snapshot(): UrlLimitSnapshot[] {
    if (this.#options.limits.size === 0) return []
    const queued = this.#options.queued()
    return [...this.#options.limits].map(([url, limits]) => {
      const state = this.#state.get(url)
      if (state !== undefined) prune(state, queued)
      return {
        url,
        ...(limits.ratePerSecond === undefined ? {} : { ratePerSecond: limits.ratePerSecond }),
        ...(limits.maxInFlight === undefined ? {} : { maxInFlight: limits.maxInFlight }),
        waiting: state?.waiting.size ?? 0,
        held: { ...(state?.held ?? { rate: 0, in_flight: 0, retry_after: 0 }) },
      }
    })
  }

  /** Gives back the slots taken and not used, and stops its timers. */
  async stop(): Promise<void> {
    this.#stopped = true
    const returns: Promise<void>[] = []
    for (const [url, state] of this.#state) {
      clearTimeout(state.timer)
      clearTimeout(state.idleTimer)
      state.waiting.clear()
      if (state.slots > 0) returns.push(this.#options.store.returnSlots(url, this.#options.owner, state.slots))
      state.slots = 0
    }
    await Promise.allSettled(returns)
  }

  // Why `url` has no room for one more request now, taking more from the store when it lacks some.
  #lacks(url: string, now: number): Held | undefined {
    const limits = this.#options.limits.get(url)!
    const state = this.#stateOf(url)
    if (state.heldUntil > now) return { reason: 'retry_after', url, waitMs: state.heldUntil - now }
    if (state.tokens > 0 && performance.now() - state.tokensAt > TOKEN_LIFE_MS) state.tokens = 0
    const rate = limits.ratePerSecond
    if (rate !== undefined && state.tokens < 1) {
      this.#takeTokens(url, rate)
      return { reason: 'rate', url, ratePerSecond: rate }
    }
    const max = limits.maxInFlight
    if (max !== undefined && state.slots < 1) {
      this.#takeSlot(url, max)
      return { reason: 'in_flight', url, maxInFlight: max }
    }
    return undefined
  }

  #takeTokens(url: string, rate: number): void {
    const state = this.#stateOf(url)
    if (state.takingTokens || this.#stopped) return
    state.takingTokens = true
    const interval = 1000 / rate
    const want = Math.max(1, Math.floor(TOKEN_CHUNK_MS / interval))
    const { store } = this.#options
    const taking = store.takeTokens(url, want, interval, burstMsOf(interval)).then((grant) => {
      if (grant.granted > 0) {
        state.tokens = (performance.now() - state.tokensAt > TOKEN_LIFE_MS ? 0 : state.tokens) + grant.granted
        state.tokensAt = performance.now()
        this.#options.resume(url)
      } else {
        if (grant.heldMs > 0) state.heldUntil = Math.max(state.heldUntil, this.#now() + grant.heldMs)
        this.#later(url, grant.waitMs)
      }
    })
    this.#run(taking, 'take the rate of', url, () => {
      state.takingTokens = false
    })
  }

  // A slot is kept for reuse at most this long after its lease was renewed (by a take): well
  // within the lease, and short enough that another relay waiting gets its turn.
  #keepSlotsMs(): number {
    return Math.min(this.#options.slotLeaseMs / 2, LIMIT_TIMINGS.keepSlotMs)
  }

  #takeSlot(url: string, max: number): void {
    const state = this.#stateOf(url)
    if (state.takingSlot || this.#stopped) return
    state.takingSlot = true
    const { owner, slotLeaseMs } = this.#options
    // As many as wait here (the deliveries behind the first too), up to the limit.
    prune(state, this.#options.queued())
    const want = Math.max(1, Math.min(max, state.waiting.size))
    const taking = this.#options.store.takeSlots(url, owner, max, want, slotLeaseMs).then((grant) => {
      if (grant.taken > 0) {
        if (this.#stopped) return this.#options.store.returnSlots(url, owner, grant.taken)
        state.slots += grant.taken
        state.slotsAt = performance.now()
        this.#returnUnused(url)
        this.#options.resume(url)
      } else {
        if (grant.heldMs > 0) state.heldUntil = Math.max(state.heldUntil, this.#now() + grant.heldMs)
        this.#later(url, grant.heldMs > 0 ? grant.heldMs : SLOT_RETRY_MS)
      }
    })
    this.#run(taking, 'take a slot of', url, () => {
      state.takingSlot = false
    })
  }

  #hold(url: string, ms: number): void {
    const state = this.#stateOf(url)
    state.heldUntil = Math.max(state.heldUntil, this.#now() + ms)
    log.info(`${redactUrl(url)} answered 429: held for ${Math.ceil(ms / 1000)} s, every relay`, {
      event: 'endpoint-held',
      url,
    })
    this.#run(this.#options.store.hold(url, ms), 'hold', url, () => {})
    this.#later(url, ms)
  }

  // A slot taken but not used within a second goes back, so no relay holds what it does not use.
  #returnUnused(url: string): void {
    const state = this.#stateOf(url)
    if (state.idleTimer !== undefined) return
    state.idleTimer = setTimeout(() => {
      state.idleTimer = undefined
      if (state.slots === 0 || this.#stopped) return
      const unused = state.slots
      state.slots = 0
      this.#giveBack(url, state, unused)
    }, UNUSED_SLOT_MS)
    state.idleTimer.unref()
  }

  // Gives `count` slots back to the store: one call at a time per URL, the slots freed meanwhile
  // given back together by the next (many requests ending at once cost one round trip).
  #giveBack(url: string, state: UrlState, count: number): void {
    state.toReturn += count
    if (state.returning) return
    state.returning = true
    const giving = state.toReturn
    state.toReturn = 0
    const { store, owner } = this.#options
    this.#run(store.returnSlots(url, owner, giving), 'return a slot of', url, () => {
      state.returning = false
      this.#options.resume(url)
      if (state.toReturn > 0) this.#giveBack(url, state, 0)
    })
  }

  // Looks at `url` again in `ms` (one timer per URL: the earliest wins).
  #later(url: string, ms: number): void {
    const state = this.#stateOf(url)
    if (this.#stopped) return
    const at = performance.now() + ms
    if (state.timer !== undefined && state.timerAt <= at) return
    clearTimeout(state.timer)
    state.timerAt = at
    state.timer = setTimeout(
      () => {
        state.timer = undefined
        this.#options.resume(url)
      },
      Math.max(1, Math.min(ms, 2 ** 31 - 1)),
    )
    state.timer.unref()
  }

  // Runs a store operation, counted as busy; a failure is logged and the URL looked at again soon.
  #run(work: Promise<unknown>, what: string, url: string, then: () => void): void {
    this.#busy++
    work
      .catch((error: unknown) => {
        log.error(`could not ${what} ${redactUrl(url)}: ${(error as Error).message}`, {
          event: 'endpoint-limits-failed',
          url,
        })
        this.#later(url, 1000)
      })
      .finally(() => {
        then()
        this.#busy--
        this.#options.settled()
      })
  }

  #stateOf(url: string): UrlState {
    let state = this.#state.get(url)
    if (state === undefined) {
      state = {
        tokens: 0,
        tokensAt: 0,
        slots: 0,
        slotsAt: 0,
        inFlight: 0,
        heldUntil: 0,
        takingTokens: false,
        takingSlot: false,
        toReturn: 0,
        returning: false,
        timer: undefined,
        timerAt: 0,
        idleTimer: undefined,
        waiting: new Set(),
        held: { rate: 0, in_flight: 0, retry_after: 0 },
      }
      this.#state.set(url, state)
    }
    return state
  }
}

// Forgets the waiting deliveries the worker no longer holds unstarted: they left by another path.
function prune(state: UrlState, queued: ReadonlySet<number>): void {
  for (const id of state.waiting) if (!queued.has(id)) state.waiting.delete(id)
}
