import { redactUrl } from '../../shared/redact-url'
import { clampTimerDelay } from '../../shared/retry'
import { log } from '../log'
import type { Route } from '../store/circuits'
import type { AttemptOutcome, DueDelivery } from '../store/store'
import { Breaker, type CircuitSnapshot, type Plan } from './breaker'
import type { AttemptResult, RetryPolicy } from './destination'
import { tellObserver } from './attempt-observer'
import { withConsole } from './functions/attempt-console'
import { IdleSignal } from './idle'
import { type ProbeCandidateHost, probeDelivery } from './probe-candidate'
import { Lane } from './lane'
import { Leases, newLeaseOwner } from './leases'
import { crashedOutcome, expiredOutcome, judgedOutcome } from './outcome'
import { outcomeWriter } from './outcome-writer'
import { type RouteStep, runStep } from './delivery-step'
import { sendAttempt, unsentBy } from './send'
import type { SettledAttempt } from '../events/kinds'
import { routesByUrl, type Sending, type WorkerOptions, type WorkerStore } from './worker-options'

export type { SettledAttempt, WorkerOptions }

// Due deliveries are claimed at least this many at a time: one round trip feeds many attempts.
const CLAIM_CHUNK = 128

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
  readonly #step: WorkerOptions['step']
  /** Deliveries whose step ran (before a URL's slot): each maps to its function's `console` lines. */
  readonly #prepared = new WeakMap<DueDelivery, readonly string[] | undefined>()
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
  readonly #routes: Map<string, readonly Route[]>
  readonly #probeHost: ProbeCandidateHost

  constructor(options: WorkerOptions) {
    this.#store = options.store
    this.#destinations = options.destinations
    this.#retries = options.retries
    this.#concurrency = options.concurrency
    this.#leaseTimeout = options.leaseTimeout
    this.#owner = options.owner ?? newLeaseOwner()
    this.#now = options.now ?? Date.now
    this.#observe = options.observe
    this.#step = options.step
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
    this.#probeHost = {
      ...{ routes: this.#routes, lanes: this.#lanes, leases: this.#leases, stopping: () => this.#stopping },
      claimProbe: (url) => this.#breaker!.claimProbe(url),
      stepped: (lane, d) =>
        this.#stepped(lane, d, this.#prepared.has(d) ? undefined : this.#step?.of(d.source, d.destination)),
    }
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
    return this.#breaker?.circuits() ?? []
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
    await this.#leases.release(waiting)
    let timer: NodeJS.Timeout | undefined
    await Promise.race([this.idle(), new Promise((resolve) => (timer = setTimeout(resolve, graceMs)))])
    clearTimeout(timer)
    await this.#outcomes.stop()
    await this.#breaker?.stop()
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
    const wanted = Math.max(CLAIM_CHUNK, 2 * this.#concurrency) - lane.buffer.length
    const pump = () => this.#schedulePump(lane)
    let sleep: Parameters<Lane['endClaim']>[0]
    try {
      const due = await this.#store.claim({
        source: lane.source,
        limit: wanted,
        owner: this.#owner,
        // A length, not an end: the store judges leases by its own clock (on PostgreSQL, the
        // database's), so this relay's clock being off never takes or keeps work it should not.
        leaseMs: this.#leaseTimeout,
      })
      lane.claimSucceeded()
      if (this.#stopping) {
        await this.#leases.release(due.map((d) => d.id))
      } else {
        this.#leases.hold(due.map((d) => d.id))
        lane.buffer.push(...due)
        if (due.length > 0) await this.#breaker?.freshen()
        if (due.length === wanted) lane.claimAgain()
        else {
          // Counts what became due since the claim too (then 0 or less: claimed again at once), so
          // nothing is missed between the two statements, which read the clock at two instants.
          const wait = await this.#store.nextDueIn(lane.source)
          // A timer may fire a millisecond early: the pump then finds nothing due and sleeps again.
          if (wait !== undefined && !this.#stopping) {
            sleep = { ms: clampTimerDelay(wait), why: 'next-due', pump }
          }
        }
      }
    } catch (error) {
      const ms = lane.claimFailed()
      log.error(
        `could not claim deliveries of source ${lane.source}: ${(error as Error).message}; claiming again in ${ms} ms`,
        { event: 'claim-failed', source: lane.source },
      )
      if (!this.#stopping) sleep = { ms, why: 'backing-off', pump }
    }
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
    while (!this.#stopping && lane.running < this.#concurrency && index < lane.buffer.length) {
      const delivery = lane.buffer[index]!
      if (waiting?.has(delivery.destination)) {
        index++
        continue
      }
      const urls = this.#urlsOf(delivery)
      const plan: Plan =
        this.#breaker === undefined || urls.length === 0
          ? { kind: 'send', urls: [], skipped: [] }
          : this.#breaker.plan(urls, delivery.firstAttemptAt, this.#now())
      if (plan.kind === 'wait') {
        waiting ??= new Set()
        waiting.add(delivery.destination)
        if (waiting.size >= destinations) break
        index++
        continue
      }
      lane.buffer.splice(index, 1)
      const step =
        plan.kind === 'send' && !this.#prepared.has(delivery)
          ? this.#step?.of(delivery.source, delivery.destination)
          : undefined
      if (step !== undefined) {
        this.#prepare(lane, delivery, step)
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

  #start(lane: Lane, delivery: DueDelivery, sending: Sending | undefined): void {
    lane.running++
    if (sending !== undefined) this.#breaker!.acquire(sending.urls)
    // The last resort of an attempt: nothing it throws may become an unhandled rejection.
    this.#attempt(lane, delivery, sending).catch((error: unknown) =>
      this.#settle(lane, crashedOutcome(delivery, this.#now(), error)),
    )
  }

  // Runs the delivery's step (its function) holding a slot of its source's lane only, never a URL's:
  // a function that loops until functionTimeout delays no other source sending to the same URL.
  // What it chose to send goes back to the front of the lane, to be planned and sent like any other.
  #prepare(lane: Lane, delivery: DueDelivery, step: RouteStep): void {
    const prepared = async () => {
      const ready = await this.#stepped(lane, delivery, step)
      if (ready !== undefined) {
        lane.buffer.unshift(ready)
        this.#schedulePump(lane)
      }
      this.#idle.check()
    }
    prepared().catch((error: unknown) => this.#settle(lane, crashedOutcome(delivery, this.#now(), error)))
  }

  // The delivery after its step, ready to send; `undefined` when the step ended it (its outcome
  // queued) or the worker is stopping (its lease given back).
  async #stepped(lane: Lane, delivery: DueDelivery, step?: RouteStep): Promise<DueDelivery | undefined> {
    if (step === undefined) return delivery
    lane.running++
    const at = this.#now()
    const verdict = await runStep(step, delivery.message)
    if (verdict.kind !== 'send') return void this.#finish(lane, delivery, at, unsentBy(verdict), [])
    lane.running--
    if (this.#stopping) return void (await this.#leases.release([delivery.id]))
    const ready: DueDelivery = { ...delivery, message: verdict.message }
    this.#prepared.set(ready, verdict.logs?.length ? verdict.logs : undefined)
    return ready
  }

  #urlsOf(delivery: DueDelivery): readonly string[] {
    return this.#destinations.get(delivery.source)?.get(delivery.destination)?.urls ?? []
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
    if (found !== undefined) this.#startProbe(found.lane, found.delivery, url)
    return found !== undefined
  }

  #startProbe(lane: Lane, delivery: DueDelivery, url: string): void {
    const plan = this.#breaker!.plan(this.#urlsOf(delivery), delivery.firstAttemptAt, this.#now(), url)
    // The probe's URL is always in the plan, so it is always a send.
    const { urls, skipped } = plan as Extract<Plan, { kind: 'send' }>
    log.info(`probing ${redactUrl(url)} with delivery ${delivery.id} of source ${lane.source}`, {
      event: 'probe',
      url,
      source: lane.source,
      deliveryId: delivery.id,
    })
    this.#start(lane, delivery, { urls, skipped, probe: url })
  }

  async #attempt(lane: Lane, delivery: DueDelivery, sending: Sending | undefined): Promise<void> {
    const at = this.#now()
    const destination = this.#destinations.get(delivery.source)?.get(delivery.destination)
    let attempt: AttemptResult | undefined
    try {
      // A delivery not run through its step yet (a step added since it was planned) runs it here.
      const step = this.#prepared.has(delivery) ? undefined : this.#step?.of(delivery.source, delivery.destination)
      attempt = await sendAttempt(destination, delivery, sending?.urls, step)
      const logs = this.#prepared.get(delivery)
      if (logs !== undefined) attempt = { ...attempt, logs }
    } finally {
      // Frees the URLs' slots and counts each answer towards its circuit, even if the attempt broke.
      const requests = attempt?.kind === 'sent' ? attempt.result.attempts : []
      if (sending !== undefined) this.#breaker!.settle(sending.urls, requests, sending.probe)
    }
    this.#finish(lane, delivery, at, attempt, sending?.skipped ?? [])
  }

  // Judges a settled attempt, tells the observer, and queues its outcome.
  #finish(lane: Lane, delivery: DueDelivery, at: number, attempt: AttemptResult, skipped: readonly string[]): void {
    const judged = judgedOutcome({ delivery, at, attempt, skipped, retries: this.#retries, now: this.#now })
    const outcome = withConsole(judged, attempt.logs, this.#now() - at)
    tellObserver(this.#observe, delivery, outcome, this.#now() - at)
    this.#settle(lane, outcome)
  }

  // Frees the attempt's slot and queues its outcome; the delivery stays held until that is written.
  #settle(lane: Lane, outcome: AttemptOutcome): void {
    if (this.#closed) return
    lane.running--
    this.#queueOutcome(lane, outcome)
    this.#schedulePump(lane)
  }

  #queueOutcome(lane: Lane, outcome: AttemptOutcome): void {
    this.#outcomes.add(outcome.id, () => ({ source: lane.source, outcome }))
  }

  #isIdle(): boolean {
    if (this.#outcomes.busy || this.#breaker?.busy) return false
    for (const lane of this.#lanes.values()) {
      if (lane.running > 0 || lane.busy) return false
    }
    return true
  }
}
