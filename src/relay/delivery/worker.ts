import type { DeliveryRoute } from '../store/circuits'
import type { AttemptOutcome, DueDelivery } from '../store/store'
import { Breaker, type CircuitSnapshot } from './breaker'
import type { AttemptResult, RetryPolicy } from './destination'
import { tellObserver } from './attempt-observer'
import { withConsole } from './attempt-console'
import { IdleSignal } from './idle'
import { type ProbeCandidateHost, probeDelivery, probeSending } from './probe-candidate'
import { Lane } from './lane'
import { Leases, newLeaseOwner } from './leases'
import { crashedOutcome, expiredOutcome, judgedOutcome } from './outcome'
import { outcomeWriter } from './outcome-writer'
import { alone, sendAttempt } from './send'
import { PreparedSteps } from './prepared-steps'
import { planStart } from './start-plan'
import { Gathering } from './gathering'
import { type ClaimHost, claimDue } from './claim'
import type { SettledAttempt } from '../events/kinds'
import { routesByUrl, type Sending, type WorkerOptions, type WorkerStore } from './worker-options'
import type { DestinationSender } from '../destinations/destination'
import type { SendOne } from './send'
import type { UrlLimitSnapshot } from './limits/url-limits'
import type { Deferral } from './limits/hold'
import { WorkerLimits } from './limits/worker-limits'

export type { SettledAttempt, WorkerOptions }

/**
 * Claims due deliveries from the store and attempts them, bounded per source ({@link Lane});
 * records each attempt and schedules the next by the retry rule, or dead-letters. Woken when new
 * deliveries are committed and by a timer for the next due retry, never by busy polling.
 *
 * A claimed delivery is leased to this worker ({@link Leases}): no other relay takes it until the
 * lease runs out, and the leases of what it holds are renewed. Outcomes are written in batches.
 *
 * With a `breaker`, each delivery goes only to URLs whose circuit is closed and that have a free
 * slot (`maxInFlightPerUrl`); one whose every URL is open is parked in the store without an
 * attempt, and one whose URLs stay open past its retry window is dead-lettered. See {@link Breaker}.
 */
export class Worker {
  readonly #store: WorkerStore
  readonly #destinations: WorkerOptions['destinations']
  readonly #retries: RetryPolicy
  readonly #concurrency: number
  readonly #leaseTimeout: number
  readonly #owner: string
  readonly #now: () => number
  readonly #observe: ((attempt: SettledAttempt) => void) | undefined
  /** Each delivery's step (its function), run once before it is planned and sent. */
  readonly #steps: PreparedSteps
  /** Lanes by source name. */
  readonly #lanes = new Map<string, Lane>()
  /** The deliveries leased to this worker and not yet settled in the store. */
  readonly #leases: Leases
  /** Outcomes waiting to be written together in one transaction. */
  readonly #outcomes: ReturnType<typeof outcomeWriter>
  /** No new attempts start (closing). */
  #stopping = false
  /** Outcomes arriving now are dropped: their deliveries are still pending, leased until expiry. */
  #closed = false
  /** Resolves `idle()`. */
  readonly #idle = new IdleSignal(() => this.#isIdle())
  /** The circuit breaker and per-URL limits (and the parking under it), when configured. */
  readonly #breaker: Breaker | undefined
  /** Each URL's routes (the deliveries that go there), for the breaker. */
  readonly #routes: Map<string, readonly DeliveryRoute[]>
  readonly #probeHost: ProbeCandidateHost
  readonly #claimHost: ClaimHost
  /** The batches being gathered, for destinations that send several messages at once. */
  readonly #gathering = new Gathering()
  /** The per-URL limits shared through the store (docs/delivery-controls.md); all pass without them. */
  readonly #limits: WorkerLimits

  constructor(options: WorkerOptions) {
    this.#store = options.store
    this.#destinations = options.destinations
    this.#retries = options.retries
    this.#concurrency = options.concurrency
    this.#leaseTimeout = options.leaseTimeout
    this.#owner = options.owner ?? newLeaseOwner()
    this.#now = options.now ?? Date.now
    this.#observe = options.observe
    this.#steps = new PreparedSteps({
      ...{ step: options.step, now: this.#now, stopping: () => this.#stopping, pump: (l) => this.#schedulePump(l) },
      finish: (lane, delivery, at, attempt) => this.#finish(lane, delivery, at, attempt, []),
      release: (id) => this.#leases.release([id]),
      settled: () => this.#idle.check(),
      crashed: (lane, delivery, error) => this.#settle(lane, crashedOutcome(delivery, this.#now(), error)),
    })
    for (const source of options.destinations.keys()) this.#lanes.set(source, new Lane(source))
    this.#routes = routesByUrl(options.destinations)
    this.#leases = new Leases({
      store: this.#store,
      owner: this.#owner,
      leaseTimeout: this.#leaseTimeout,
      now: this.#now,
      renewAlso: (leaseUntil) => this.#breaker?.renewProbes(leaseUntil) ?? Promise.resolve(),
    })
    this.#outcomes = outcomeWriter(this.#store, {
      written: (written, afterFailures) => {
        this.#leases.settled(written.map((w) => w.outcome.id))
        if (afterFailures) this.wake()
        // A recorded failure may be due again soon: let each lane re-arm its timer.
        else for (const source of new Set(written.map((w) => w.source))) this.#schedulePump(this.#lanes.get(source)!)
      },
      settled: () => this.#idle.check(),
    })
    this.#claimHost = {
      ...{ store: this.#store, owner: this.#owner, leaseTimeout: this.#leaseTimeout, leases: this.#leases },
      concurrency: this.#concurrency,
      stopping: () => this.#stopping,
      freshen: () => this.#breaker?.freshen() ?? Promise.resolve(),
    }
    this.#probeHost = {
      ...{ routes: this.#routes, lanes: this.#lanes, leases: this.#leases, stopping: () => this.#stopping },
      claimProbe: (url) => this.#breaker!.claimProbe(url),
      stepped: (lane, d) => this.#steps.stepped(lane, d, this.#steps.of(d)),
    }
    this.#limits = new WorkerLimits({
      ...{ destinations: options.destinations, limits: options.limits, owner: this.#owner, now: this.#now },
      ...{ lanes: this.#lanes, settled: () => this.#idle.check() },
      ...{ resume: (url: string) => this.#resume(url), deferred: (id: number) => this.#leases.settled([id]) },
    })
    const breaker = options.breaker
    if (breaker !== undefined) {
      this.#breaker = new Breaker(breaker, {
        owner: this.#owner,
        now: this.#now,
        leaseTimeout: this.#leaseTimeout,
        routes: this.#routes,
        retryWindow: this.#retries.window,
        resume: (url) => this.#resume(url),
        wakeAll: () => this.wake(),
        probe: (url) => this.#probe(url),
        parked: (ids) => this.#leases.settled(ids),
        release: (ids) => this.#leases.release(ids),
        settled: () => this.#idle.check(),
      })
      this.#breaker.start()
    }
  }

  /**
   * Each webhook URL's circuit and requests in flight, as this relay sees them (for metrics).
   * Empty without a breaker.
   */
  circuits(): CircuitSnapshot[] {
    return this.#limits.withLimits(this.#breaker?.circuits() ?? [])
  }

  /** Each limited URL's limits and what waits behind them here (for metrics). Empty without limits. */
  limits(): UrlLimitSnapshot[] {
    return this.#limits.snapshot()
  }

  /**
   * Reads the circuits of `urls` from the store now, not at the next poll: an operator paused or
   * resumed them through this relay, and its next request must already know.
   */
  async refreshCircuits(urls: readonly string[]): Promise<void> {
    await this.#breaker?.refresh(urls)
  }

  /** The destinations given changed in place: lanes for new sources, each URL's routes read again, all woken. */
  sourcesChanged(): void {
    for (const source of this.#destinations.keys())
      if (!this.#lanes.has(source)) this.#lanes.set(source, new Lane(source))
    this.#routes.clear()
    for (const [url, routed] of routesByUrl(this.#destinations)) this.#routes.set(url, routed)
    this.#limits.sourcesChanged()
    this.wake()
  }

  /** New deliveries were committed (or retries became due): look for work on every lane. */
  wake(): void {
    for (const lane of this.#lanes.values()) this.#schedulePump(lane)
  }

  /** Resolves once nothing is scheduled, claimed, in flight or waiting to be written (for tests and shutdown). */
  idle(): Promise<void> {
    return this.#idle.wait()
  }

  /**
   * Stops taking deliveries, gives back the leases of those not yet started, and waits up to
   * `graceMs` for those in flight; their outcomes are written. Deliveries still in flight after
   * that stay pending, leased until their lease runs out.
   */
  async stop(graceMs: number): Promise<void> {
    this.#stopping = true
    const waiting: number[] = []
    for (const lane of this.#lanes.values()) for (const delivery of lane.stop()) waiting.push(delivery.id)
    waiting.push(...this.#limits.dropProbes())
    await this.#leases.release(waiting)
    // Batches still gathering go now: their deliveries are in flight.
    this.#gathering.flushAll()
    await this.#idle.waitAtMost(graceMs)
    await this.#outcomes.stop()
    await this.#breaker?.stop()
    await this.#limits.stop()
    this.#closed = true
    // Outcomes that could not be written now are left: their deliveries are pending (leased until expiry).
    this.#leases.stop()
  }

  #schedulePump(lane: Lane): void {
    if (!this.#stopping) lane.schedule(() => this.#pump(lane))
  }

  #pump(lane: Lane): void {
    if (this.#stopping || this.#outcomes.failing) {
      this.#idle.check()
      return
    }
    if (lane.buffer.length < this.#concurrency) {
      void this.#claim(lane)
    } else {
      this.#startAttempts(lane)
      this.#idle.check()
    }
  }

  async #claim(lane: Lane): Promise<void> {
    lane.claim()
    const sleep = await claimDue(lane, this.#claimHost, () => this.#schedulePump(lane))
    const again = lane.endClaim(sleep)
    this.#startAttempts(lane)
    if (again) this.#schedulePump(lane)
    this.#idle.check()
  }

  // Starts what the lane's slots allow. With a breaker, each delivery goes where the circuits and
  // the per-URL limits let it: one that must wait for a URL keeps its place, and the others pass.
  #startAttempts(lane: Lane): void {
    // The deliveries of one destination all go to the same URLs: once one must wait, they all do.
    const destinations = this.#destinations.get(lane.source)?.size ?? 0
    let waiting: Set<string> | undefined
    let index = 0
    while (!this.#stopping && index < lane.buffer.length) {
      const delivery = lane.buffer[index]!
      // A batch of its route is gathering: the delivery joins it, planned and counted with it,
      // whether or not the lane has a free slot.
      const batch = this.#gathering.open(delivery, this.#steps.pending(delivery))
      if (batch !== undefined) {
        lane.buffer.splice(index, 1)
        this.#join(lane, delivery, batch)
        continue
      }
      if (lane.running >= this.#concurrency && !this.#gathering.gathering) break
      if (waiting?.has(delivery.destination) || lane.running >= this.#concurrency) {
        index++
        continue
      }
      const urls = this.#urlsOf(delivery)
      const host = { breaker: this.#breaker, limits: this.#limits, steps: this.#steps, now: this.#now }
      const { plan, step } = planStart(delivery, urls, lane.buffer, host)
      if (plan.kind === 'wait') {
        waiting ??= new Set()
        waiting.add(delivery.destination)
        if (waiting.size >= destinations) break
        index++
        continue
      }
      lane.buffer.splice(index, 1)
      if (step !== undefined) {
        this.#steps.prepare(lane, delivery, step)
      } else if (plan.kind === 'send') {
        // Without a breaker (a replay lane's worker), nothing is planned: every URL of the destination.
        this.#start(lane, delivery, urls.length === 0 || this.#breaker === undefined ? undefined : plan)
      } else if (plan.kind === 'park') {
        this.#breaker!.park(delivery.id, urls, plan.error)
      } else {
        this.#queueOutcome(lane, expiredOutcome(delivery, this.#now(), plan.error))
      }
    }
  }

  // Joins a gathering batch, holding no slot of its own: the batch's first delivery holds it.
  #join(lane: Lane, delivery: DueDelivery, send: SendOne): void {
    this.#gathering.joined(+1)
    this.#attempt(lane, delivery, undefined, send)
      .catch((error: unknown) => this.#settle(lane, crashedOutcome(delivery, this.#now(), error), false))
      .finally(() => {
        this.#gathering.joined(-1)
        this.#idle.check()
      })
  }

  #start(lane: Lane, delivery: DueDelivery, sending: Sending | undefined): void {
    lane.running++
    if (sending !== undefined) this.#breaker!.acquire(sending.urls)
    // The last resort of an attempt: nothing it throws may become an unhandled rejection.
    this.#attempt(lane, delivery, sending).catch((error: unknown) =>
      this.#settle(lane, crashedOutcome(delivery, this.#now(), error)),
    )
  }

  #senderOf(delivery: DueDelivery): DestinationSender | undefined {
    return this.#destinations.get(delivery.source)?.get(delivery.destination)
  }

  #urlsOf(delivery: DueDelivery): readonly string[] {
    return this.#senderOf(delivery)?.targets ?? []
  }

  // A URL's circuit or slots changed: the lanes that send there look at their waiting deliveries.
  #resume(url: string): void {
    for (const { source } of this.#routes.get(url) ?? []) {
      const lane = this.#lanes.get(source)
      if (lane !== undefined) this.#schedulePump(lane)
    }
  }

  // This relay holds the URL's probe: send a delivery there, after its step (see probeDelivery).
  async #probe(url: string): Promise<boolean> {
    const found = await probeDelivery(url, this.#probeHost)
    if (found === undefined) return false
    const plan = this.#breaker!.plan(this.#urlsOf(found.delivery), found.delivery.firstAttemptAt, this.#now(), url)
    const sending = probeSending(plan, url, found)
    const go = () => this.#start(found.lane, found.delivery, sending)
    this.#limits.probe(found.delivery.id, sending.urls, go)
    return true
  }

  // `joined`: the delivery joins a gathering batch through it (holding no slot of its own).
  async #attempt(lane: Lane, delivery: DueDelivery, sending: Sending | undefined, joined?: SendOne): Promise<void> {
    const at = this.#now()
    const sender = this.#senderOf(delivery)
    let attempt: AttemptResult | undefined
    try {
      // A delivery not run through its step yet (a step added since it was planned) runs it here.
      const step = this.#steps.of(delivery)
      // A probe goes alone; another delivery opens a batch its route's next deliveries join.
      const send =
        joined ??
        (sender === undefined || sending?.probe !== undefined
          ? undefined
          : (this.#gathering.start(delivery, sender, sending?.urls) ?? alone(sender, sending?.urls)))
      attempt = await sendAttempt(sender, delivery, sending?.urls, step, send)
      const logs = this.#steps.logs(delivery)
      if (logs !== undefined) attempt = { ...attempt, logs }
    } finally {
      // Frees the targets' slots and counts each answer towards its circuit, even if the attempt
      // broke; a receiver's 429 with Retry-After to a limited URL holds it instead.
      this.#limits.release(delivery.id, attempt)
      if (sending !== undefined)
        this.#breaker!.settle(sending.urls, this.#limits.forBreaker(attempt, sending.urls), sending.probe)
    }
    const deferral = this.#limits.deferralOf(attempt)
    if (deferral !== undefined) return this.#defer(lane, delivery, deferral, joined === undefined)
    this.#finish(lane, delivery, at, attempt, sending?.skipped ?? [], joined === undefined)
  }

  // Held by its receiver's 429: back to the outbox for the Retry-After, not counted as an attempt.
  #defer(lane: Lane, delivery: DueDelivery, deferral: Deferral, holdsSlot: boolean): void {
    if (this.#closed) return
    if (holdsSlot) lane.running--
    this.#limits.defer(delivery.id, deferral, () => {
      this.#schedulePump(lane)
      this.#idle.check()
    })
  }

  // Judges a settled attempt, tells the observer, and queues its outcome.
  #finish(
    lane: Lane,
    delivery: DueDelivery,
    at: number,
    attempt: AttemptResult,
    skipped: readonly string[],
    holdsSlot = true,
  ): void {
    const retries = this.#senderOf(delivery)?.retries ?? this.#retries
    const judged = judgedOutcome({ delivery, at, attempt, skipped, retries, now: this.#now })
    const outcome = withConsole(judged, attempt.logs, this.#now() - at)
    tellObserver(this.#observe, delivery, outcome, this.#now() - at)
    this.#settle(lane, outcome, holdsSlot)
  }

  // Frees the attempt's slot and queues its outcome; the delivery stays held until that is written.
  #settle(lane: Lane, outcome: AttemptOutcome, holdsSlot = true): void {
    if (this.#closed) return
    if (holdsSlot) lane.running--
    this.#queueOutcome(lane, outcome)
    this.#schedulePump(lane)
  }

  #queueOutcome(lane: Lane, outcome: AttemptOutcome): void {
    this.#outcomes.add(outcome.id, () => ({ source: lane.source, outcome }))
  }

  #isIdle(): boolean {
    if (this.#outcomes.busy || this.#breaker?.busy || this.#gathering.busy) return false
    if (this.#limits.busy) return false
    for (const lane of this.#lanes.values()) {
      if (lane.running > 0 || lane.busy) return false
    }
    return true
  }
}
