import { redactUrl } from '../../../shared/redact-url'
import type { DeliveryAttempt } from '../../../webhooks/index'
import type { DestinationSender, TargetLimits } from '../../destinations/destination'
import type { CircuitSnapshot } from '../../store/circuit-snapshot'
import type { EndpointLimitStore } from '../../store/endpoint-limits'
import { type AttemptResult, breakerRequestsOf, requestsOf } from '../destination'
import { type Deferral, deferralOf } from './hold'
import { limitsByUrl } from './limits-by-url'
import { UrlLimits, type UrlLimitSnapshot } from './url-limits'

/** What a worker's per-URL limits need from it. */
export interface WorkerLimitsOptions {
  /** The worker's destinations by source, changed in place when the sources change. */
  destinations: ReadonlyMap<string, ReadonlyMap<string, DestinationSender>>
  /** The shared budget and its slot lease; without it no limit is held (every call lets all pass). */
  limits: { store: EndpointLimitStore; slotLeaseMs: number } | undefined
  /** The worker's owner id: its slots and deferrals are kept under it. */
  owner: string
  /** The worker's lanes: the deliveries in their buffers are the ones that may wait for room. */
  lanes: ReadonlyMap<string, { readonly buffer: readonly { readonly id: number }[] }>
  /** A URL may have room again: the lanes waiting for it look again. */
  resume(url: string): void
  /** A store operation ended: the worker may have become idle. */
  settled(): void
  /** The store has delivery `id` back after a receiver's hold: the worker no longer holds it. */
  deferred(id: number): void
  now: () => number
}

/**
 * The worker's side of the per-URL limits (docs/delivery-controls.md): which limited URLs each
 * delivery in flight took room on, giving that room back when its attempt ends, and putting back
 * the deliveries a receiver held with a 429. Kept out of the worker so that it only asks "may this
 * delivery go?" and "was it held?"; without a shared budget every delivery may go and none is held.
 */
export class WorkerLimits {
  readonly #owner: string
  readonly #deferred: (id: number) => void
  readonly #destinations: WorkerLimitsOptions['destinations']
  /** The shared limits, when a budget was given. */
  readonly #limits: UrlLimits | undefined
  /** Each URL's limits, updated in place (the {@link UrlLimits} read the same map). */
  readonly #byUrl: Map<string, TargetLimits>
  /** The limited URLs each delivery in flight took room on, by its id. */
  readonly #admitted = new Map<number, readonly string[]>()
  /** Deliveries being put back by a receiver's hold. */
  #deferring = 0
  /** The breaker's probes waiting for room on their URLs, by delivery id: each sent once it has. */
  readonly #probes = new Map<number, { urls: readonly string[]; go: () => void }>()
  readonly #resumeLanes: (url: string) => void

  constructor(options: WorkerLimitsOptions) {
    this.#owner = options.owner
    this.#deferred = options.deferred
    this.#destinations = options.destinations
    this.#resumeLanes = options.resume
    this.#byUrl = limitsByUrl(options.destinations)
    if (options.limits !== undefined) {
      this.#limits = new UrlLimits({
        ...options.limits,
        owner: options.owner,
        limits: this.#byUrl,
        resume: (url) => this.#resume(url),
        settled: options.settled,
        queued: () => queuedIds(options.lanes, this.#probes.keys()),
        now: options.now,
      })
      this.#limits.declare()
    }
  }

  /** Work is under way (a store call, a delivery being put back) that the worker's `idle()` waits for. */
  get busy(): boolean {
    return this.#limits?.busy === true || this.#deferring > 0
  }

  /** Each limited URL's limits and what waits behind them here (for metrics). Empty without limits. */
  snapshot(): UrlLimitSnapshot[] {
    return this.#limits?.snapshot() ?? []
  }

  /**
   * `circuits` with each limited URL's limits added: the metrics show a URL's circuit and its
   * limits together. The circuits' URLs are redacted, so the limits are matched redacted too.
   */
  withLimits(circuits: readonly CircuitSnapshot[]): CircuitSnapshot[] {
    const limits = new Map(this.snapshot().map(({ url, ...limit }) => [redactUrl(url), limit]))
    return circuits.map((circuit) => {
      const limit = limits.get(circuit.url)
      return limit === undefined ? circuit : { ...circuit, limit }
    })
  }

  /** The sources changed: each URL's limits are read again, and recorded for the endpoints view. */
  sourcesChanged(): void {
    this.#byUrl.clear()
    for (const [url, limits] of limitsByUrl(this.#destinations)) this.#byUrl.set(url, limits)
    this.#limits?.declare()
  }

  /**
   * Takes room for delivery `id` on the limited URLs of `urls` (all or none): `true` when it may
   * go, `false` when it waits (the worker is resumed when to look again). `behind`: the deliveries
   * waiting behind it, counted as held too. Always `true` without limits.
   */
  admit(id: number, urls: readonly string[], behind: () => readonly number[]): boolean {
    if (this.#limits === undefined) return true
    if (this.#limits.admit(id, urls, behind) !== undefined) return false
    // Kept even when none of its URLs is limited: its attempt's 429s may still hold a limited URL.
    this.#admitted.set(
      id,
      urls.filter((url) => this.#byUrl.has(url)),
    )
    return true
  }

  /**
   * Sends the breaker's probe, delivery `id` to `urls`, by calling `go` once every limited URL
   * among them has room: at once when they have, else when one of them has room again. A probe
   * waits like any delivery (held back, not an attempt, not lost) and goes before the lanes.
   */
  probe(id: number, urls: readonly string[], go: () => void): void {
    if (this.admit(id, urls, () => [])) go()
    else this.#probes.set(id, { urls, go })
  }

  /** The probes still waiting for room, given up (the worker stops): their deliveries' ids. */
  dropProbes(): number[] {
    const ids = [...this.#probes.keys()]
    this.#probes.clear()
    return ids
  }

  /**
   * The attempt of delivery `id` ended (or broke: `attempt` undefined): frees the room it took and
   * holds each URL whose receiver answered 429 with a `Retry-After`. Nothing for one not admitted.
   */
  release(id: number, attempt: AttemptResult | undefined): void {
    const admitted = this.#admitted.get(id)
    if (admitted === undefined) return
    this.#admitted.delete(id)
    this.#limits!.release(admitted, requestsOf(attempt))
  }

  /**
   * The requests the breaker judges `urls` by after `attempt` ({@link breakerRequestsOf}), less
   * a receiver's hold on a limited URL: that is no failure of the URL.
   */
  forBreaker(attempt: AttemptResult | undefined, urls: readonly string[]): readonly DeliveryAttempt[] {
    const requests = breakerRequestsOf(attempt, urls)
    return this.#limits?.forBreaker(requests) ?? requests
  }

  /** The hold of an attempt a limited URL's receiver answered with 429s only; `undefined` otherwise. */
  deferralOf(attempt: AttemptResult | undefined): Deferral | undefined {
    return this.#limits === undefined ? undefined : deferralOf(attempt, this.#byUrl)
  }

  /**
   * Puts delivery `id` back in the outbox as `deferral` says, not counted as an attempt; tells the
   * worker once the store has it, then calls `done` however it went (the lease of one not stored
   * runs out).
   */
  defer(id: number, deferral: Deferral, done: () => void): void {
    this.#deferring++
    this.#limits!.deferStore(this.#owner, id, deferral)
      .then(() => this.#deferred(id))
      .finally(() => {
        this.#deferring--
        done()
      })
  }

  /** Gives back the slots taken and not used, and stops the limits' timers. */
  async stop(): Promise<void> {
    await this.#limits?.stop()
  }

  // A URL may have room: the probes waiting for it take it first, then the lanes look again.
  #resume(url: string): void {
    for (const [id, probe] of this.#probes) {
      if (!probe.urls.includes(url) || !this.admit(id, probe.urls, () => [])) continue
      this.#probes.delete(id)
      probe.go()
    }
    this.#resumeLanes(url)
  }
}

// The ids of the deliveries in `lanes`' buffers and of `probes`.
function queuedIds(lanes: WorkerLimitsOptions['lanes'], probes: Iterable<number>): Set<number> {
  const ids = new Set(probes)
  for (const lane of lanes.values()) for (const delivery of lane.buffer) ids.add(delivery.id)
  return ids
}
