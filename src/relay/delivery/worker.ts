import { randomUUID } from 'node:crypto'
import { redactUrl } from '../../shared/redact-url'
import { clampTimerDelay } from '../../shared/retry'
import { log, plural } from '../log'
import type { CircuitStore, Route } from '../store/circuits'
import type { AttemptOutcome, DueDelivery, Store } from '../store/store'
import { Breaker, type BreakerConfig, type CircuitSnapshot, type Plan } from './breaker'
import type { Destination, DestinationResult, RetrySchedule } from './destination'
import { crashedOutcome, outcomeOf } from './outcome'
import { Parking } from './parking'
import { nextBackoff } from './timing'

/** What the worker needs: the store, each source's destinations by name, and the retry rule. */
export interface WorkerOptions {
  store: Store
  /** Source name → destination name → destination. */
  destinations: ReadonlyMap<string, ReadonlyMap<string, Destination>>
  schedule: RetrySchedule
  /** Deliveries in flight at once, per source. */
  concurrency: number
  /** How long a claim holds before another relay may take the work, ms; renewed while in flight. */
  leaseTimeout: number
  /** This relay's id, written with its leases. @default a random UUID */
  owner?: string
  /**
   * The circuit breaker per URL and the limit on requests in flight per URL, for destinations that
   * send to URLs. Without it, every due delivery is attempted.
   */
  breaker?: BreakerConfig
  /** Told of every attempt's outcome as it settles (metrics). Must not throw. */
  observe?: (attempt: SettledAttempt) => void
  now?: () => number
}

/** One attempt as it settled, for observers such as metrics. */
export interface SettledAttempt {
  source: string
  destination: string
  outcome: AttemptOutcome
  /** How long the attempt took, ms (every request of its fan-out, concurrently). */
  ms: number
}

// Each source has its own lane (claims, timer), so a slow receiver fills only its own lane's slots
// and the other sources' deliveries keep flowing.
interface Lane {
  source: string
  /** Attempts running now: at most `concurrency`. */
  running: number
  /** Claimed deliveries waiting for a free slot (claimed in chunks, not one query per slot). */
  buffer: DueDelivery[]
  /** A claim is being made; `again` asks for another pump once it settles. */
  claiming: boolean
  again: boolean
  /** Wakes the lane when its next retry is due (or after a failed claim). */
  timer: NodeJS.Timeout | undefined
  pumpScheduled: boolean
  /** The wait before claiming again after a failed claim, ms; 0 while claims succeed. */
  claimRetryMs: number
}

// Due deliveries are claimed at least this many at a time: one round trip feeds many attempts.
const CLAIM_CHUNK = 128

// Outcomes are written together, at most this often: one transaction for many attempts. Losing
// the unwritten ones in a crash only means those messages are sent again (at-least-once).
const RECORD_INTERVAL_MS = 5

// What one attempt sends, as the breaker planned it: to `urls`, leaving out `skipped` (with why),
// carrying the probe of `probe` when this relay holds it.
interface Sending {
  urls: string[]
  skipped: string[]
  probe?: string
}

/**
 * Claims due deliveries from the store and attempts them, bounded per source; records each
 * attempt and schedules the next by the retry rule, or dead-letters. Woken when new deliveries are
 * committed and by a timer for the next due retry, never by busy polling.
 *
 * A claimed delivery is leased to this worker: no other relay takes it until the lease runs out.
 * Leases of deliveries still held (waiting, in flight, or their outcome not yet written) are
 * renewed every third of `leaseTimeout`, so an attempt may outlast the lease timeout; if this
 * process dies, its leases run out and another relay (or this one, restarted) delivers the work.
 *
 * With a `breaker`, each delivery goes only to URLs whose circuit is closed and that have a free
 * slot (`maxInFlightPerUrl`); one whose every URL is open is parked in the store without an
 * attempt, and one whose URLs stay open past its retry window is dead-lettered. See {@link Breaker}.
 */
export class Worker {
  readonly #store: Store
  readonly #destinations: WorkerOptions['destinations']
  readonly #schedule: RetrySchedule
  readonly #concurrency: number
  readonly #leaseTimeout: number
  readonly #owner: string
  readonly #now: () => number
  readonly #observe: ((attempt: SettledAttempt) => void) | undefined
  /** Lanes by source name. */
  readonly #lanes = new Map<string, Lane>()
  /** Ids leased to this worker and not yet recorded (waiting, in flight, or outcome unwritten). */
  readonly #held = new Set<number>()
  /** Outcomes waiting to be written together in one transaction. */
  #outcomes: { lane: Lane; outcome: AttemptOutcome }[] = []
  /** The timer that writes `#outcomes`. */
  #recordTimer: NodeJS.Timeout | undefined
  /** The write of outcomes under way, if any: one at a time. */
  #recording: Promise<void> | undefined
  /** The wait before the next write after the last one failed, ms; 0 while writes succeed. */
  #recordRetryMs = 0
  /** The timer that renews this worker's leases. */
  #renewTimer: NodeJS.Timeout | undefined
  /** No new attempts start (closing). */
  #stopping = false
  /** Outcomes arriving now are dropped: their deliveries are still pending, leased until expiry. */
  #closed = false
  /** Resolvers of `idle()`. */
  #idleWaiters: (() => void)[] = []
  /** The circuit breaker and per-URL limits, when configured; and where it parks deliveries. */
  readonly #breaker: Breaker | undefined
  readonly #parking: Parking | undefined
  readonly #circuits: CircuitStore | undefined
  /** Each URL's routes (the deliveries that go there), for the breaker. */
  readonly #routes = new Map<string, Route[]>()

  constructor(options: WorkerOptions) {
    this.#store = options.store
    this.#destinations = options.destinations
    this.#schedule = options.schedule
    this.#concurrency = options.concurrency
    this.#leaseTimeout = options.leaseTimeout
    this.#owner = options.owner ?? randomUUID()
    this.#now = options.now ?? Date.now
    this.#observe = options.observe
    for (const source of options.destinations.keys()) {
      this.#lanes.set(source, {
        source,
        running: 0,
        buffer: [],
        claiming: false,
        again: false,
        timer: undefined,
        pumpScheduled: false,
        claimRetryMs: 0,
      })
    }
    for (const [source, destinations] of options.destinations) {
      for (const [destination, { urls = [] }] of destinations) {
        for (const url of new Set(urls))
          this.#routes.set(url, [...(this.#routes.get(url) ?? []), { source, destination }])
      }
    }
    const breaker = options.breaker
    this.#circuits = breaker?.circuits
    if (breaker !== undefined) {
      this.#breaker = new Breaker(breaker, {
        owner: this.#owner,
        now: this.#now,
        leaseTimeout: this.#leaseTimeout,
        routes: this.#routes,
        resume: (url) => this.#resume(url),
        wakeAll: () => this.wake(),
        probe: (url) => this.#probe(url),
        settled: () => this.#checkIdle(),
      })
      this.#parking = new Parking(breaker.circuits, breaker.retryWindow, {
        owner: this.#owner,
        now: this.#now,
        parked: (ids) => {
          for (const id of ids) this.#held.delete(id)
        },
        refused: (ids, urls) => void this.#unpark(ids, urls),
        settled: () => this.#checkIdle(),
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

  /** New deliveries were committed (or retries became due): look for work on every lane. */
  wake(): void {
    for (const lane of this.#lanes.values()) this.#schedulePump(lane)
  }

  /** Resolves once nothing is scheduled, claimed, in flight or waiting to be written (for tests and shutdown). */
  idle(): Promise<void> {
    if (this.#isIdle()) return Promise.resolve()
    return new Promise((resolve) => this.#idleWaiters.push(resolve))
  }

  /**
   * Stops taking deliveries, gives back the leases of those not yet started, and waits up to
   * `graceMs` for those in flight; their outcomes are written. Deliveries still in flight after
   * that stay pending, leased until their lease runs out.
   */
  async stop(graceMs: number): Promise<void> {
    this.#stopping = true
    const waiting: number[] = []
    for (const lane of this.#lanes.values()) {
      clearTimeout(lane.timer)
      for (const delivery of lane.buffer) waiting.push(delivery.id)
      lane.buffer = []
    }
    await this.#releaseLeases(waiting)
    let timer: NodeJS.Timeout | undefined
    await Promise.race([this.idle(), new Promise((resolve) => (timer = setTimeout(resolve, graceMs)))])
    clearTimeout(timer)
    clearTimeout(this.#recordTimer)
    await this.#recording
    await this.#record()
    await this.#parking?.stop()
    await this.#breaker?.stop()
    this.#closed = true
    // Outcomes that could not be written now are left: their deliveries are pending (leased until expiry).
    clearTimeout(this.#recordTimer)
    clearTimeout(this.#renewTimer)
  }

  #schedulePump(lane: Lane): void {
    if (lane.pumpScheduled || this.#stopping) return
    lane.pumpScheduled = true
    setImmediate(() => {
      lane.pumpScheduled = false
      this.#pump(lane)
    })
  }

  #pump(lane: Lane): void {
    if (this.#stopping || this.#recordRetryMs > 0) {
      this.#checkIdle()
      return
    }
    if (lane.claiming) {
      lane.again = true
      return
    }
    clearTimeout(lane.timer)
    lane.timer = undefined
    if (lane.buffer.length < this.#concurrency) {
      void this.#claim(lane)
    } else {
      this.#startAttempts(lane)
      this.#checkIdle()
    }
  }

  async #claim(lane: Lane): Promise<void> {
    lane.claiming = true
    lane.again = false
    const wanted = Math.max(CLAIM_CHUNK, 2 * this.#concurrency) - lane.buffer.length
    // One instant for both questions: a delivery due at exactly `now` is either claimed here or
    // timed, never missed between two readings of the clock.
    const now = this.#now()
    try {
      const due = await this.#store.claim({
        source: lane.source,
        limit: wanted,
        now,
        owner: this.#owner,
        leaseUntil: now + this.#leaseTimeout,
      })
      lane.claimRetryMs = 0
      if (this.#stopping) {
        await this.#releaseLeases(due.map((d) => d.id))
      } else {
        for (const delivery of due) {
          this.#held.add(delivery.id)
          lane.buffer.push(delivery)
        }
        this.#armRenewal()
        if (due.length > 0) await this.#breaker?.freshen()
        if (due.length === wanted) lane.again = true
        else await this.#armTimer(lane, now)
      }
    } catch (error) {
      lane.claimRetryMs = nextBackoff(lane.claimRetryMs)
      log.error(
        `could not claim deliveries of source ${lane.source}: ${(error as Error).message}; claiming again in ${lane.claimRetryMs} ms`,
        { event: 'claim-failed', source: lane.source },
      )
      clearTimeout(lane.timer)
      lane.timer = setTimeout(() => this.#schedulePump(lane), lane.claimRetryMs)
      lane.timer.unref()
    } finally {
      lane.claiming = false
    }
    this.#startAttempts(lane)
    if (lane.again) this.#schedulePump(lane)
    this.#checkIdle()
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
      if (plan.kind === 'send') {
        this.#start(lane, delivery, urls.length === 0 ? undefined : plan)
      } else if (plan.kind === 'park') {
        this.#parking!.add(delivery.id, urls, plan.error)
      } else {
        const at = this.#now()
        log.warn(
          `delivery ${delivery.id} of source ${lane.source} dead-lettered: retry window spent, its circuits open`,
          {
            event: 'dead-lettered',
            reason: 'window-spent',
            source: lane.source,
            deliveryId: delivery.id,
            messageId: delivery.message.messageId,
          },
        )
        this.#queueOutcome(lane, { id: delivery.id, at, requests: [], next: { status: 'failed', error: plan.error } })
      }
    }
  }

  #start(lane: Lane, delivery: DueDelivery, sending: Sending | undefined): void {
    lane.running++
    if (sending !== undefined) this.#breaker!.acquire(sending.urls)
    this.#attempt(lane, delivery, sending).catch((error: unknown) => this.#abandon(lane, delivery, error))
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

  // This relay holds the URL's probe: send a delivery there, one already claimed here if any.
  async #probe(url: string): Promise<boolean> {
    if (this.#stopping) return false
    const routes = this.#routes.get(url) ?? []
    for (const route of routes) {
      const lane = this.#lanes.get(route.source)
      const index = lane?.buffer.findIndex((d) => d.destination === route.destination) ?? -1
      if (lane !== undefined && index >= 0) {
        this.#startProbe(lane, lane.buffer.splice(index, 1)[0]!, url)
        return true
      }
    }
    const now = this.#now()
    const delivery = await this.#circuits!.claimProbe(routes, this.#owner, now, now + this.#leaseTimeout)
    if (delivery === undefined) return false
    const lane = this.#lanes.get(delivery.source)
    if (lane === undefined || this.#stopping) {
      await this.#releaseLeases([delivery.id])
      return false
    }
    this.#held.add(delivery.id)
    this.#armRenewal()
    this.#startProbe(lane, delivery, url)
    return true
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

  // Deliveries the store would not park (a circuit closed meanwhile) are given back, due at once.
  async #unpark(ids: readonly number[], urls: readonly string[]): Promise<void> {
    await this.#releaseLeases(ids)
    await this.#breaker!.refresh(urls)
    this.wake()
  }

  // Sleeps until the lane's next retry is due. Unref'd: a pending retry never keeps the process up.
  async #armTimer(lane: Lane, now: number): Promise<void> {
    const dueAt = await this.#store.nextDueAt(lane.source, now)
    if (dueAt === undefined || this.#stopping) return
    clearTimeout(lane.timer)
    // A timer may fire a millisecond early: the pump then finds nothing due and arms it again.
    lane.timer = setTimeout(() => this.#schedulePump(lane), clampTimerDelay(dueAt - this.#now()))
    lane.timer.unref()
  }

  // Renews the leases of everything this worker holds, every third of the lease timeout.
  #armRenewal(): void {
    if (this.#renewTimer !== undefined || this.#held.size === 0) return
    this.#renewTimer = setTimeout(
      () => {
        this.#renewTimer = undefined
        if (this.#closed || this.#held.size === 0) return
        const now = this.#now()
        // A probe in flight is held as long as its delivery (a failure here only lets another relay probe sooner).
        this.#breaker?.renewProbes(now + this.#leaseTimeout).catch((error: unknown) => {
          log.error(`could not renew the probes held: ${(error as Error).message}`, { event: 'renew-failed' })
        })
        this.#store.renew(this.#owner, [...this.#held], now + this.#leaseTimeout).then(
          () => this.#armRenewal(),
          (error: unknown) => {
            log.error(`could not renew ${plural(this.#held.size, 'lease')}: ${(error as Error).message}`, {
              event: 'renew-failed',
            })
            this.#armRenewal()
          },
        )
      },
      Math.max(1, Math.floor(this.#leaseTimeout / 3)),
    )
    this.#renewTimer.unref()
  }

  async #releaseLeases(ids: readonly number[]): Promise<void> {
    for (const id of ids) this.#held.delete(id)
    if (ids.length === 0) return
    try {
      await this.#store.release(this.#owner, ids)
    } catch (error) {
      // They stay leased until the lease runs out; then anyone may take them.
      log.warn(`could not release ${plural(ids.length, 'lease')}: ${(error as Error).message}`, {
        event: 'release-failed',
      })
    }
  }

  async #attempt(lane: Lane, delivery: DueDelivery, sending: Sending | undefined): Promise<void> {
    const at = this.#now()
    let result: DestinationResult | undefined
    try {
      result = await this.#send(delivery, at, sending?.urls)
    } finally {
      // Frees the URLs' slots and counts each answer towards its circuit, even if the attempt broke.
      if (sending !== undefined) this.#breaker!.settle(sending.urls, result?.attempts ?? [], sending.probe)
    }
    let outcome: AttemptOutcome
    try {
      outcome = outcomeOf({
        delivery,
        at,
        result,
        skipped: sending?.skipped ?? [],
        schedule: this.#schedule,
        now: this.#now,
      })
    } catch (error) {
      // A bug or a bad value while judging the attempt: dead-letter the delivery with the error
      // (it can be retried by hand) rather than leave it taken forever or crash the process.
      outcome = crashedOutcome(delivery, at, error, result.attempts)
    }
    try {
      this.#observe?.({ source: delivery.source, destination: delivery.destination, outcome, ms: this.#now() - at })
    } catch (error) {
      log.error(`an observer of attempts threw: ${(error as Error).message}`, { event: 'internal-error' })
    }
    this.#settle(lane, outcome)
  }

  // The last resort of an attempt: nothing it throws may become an unhandled rejection.
  #abandon(lane: Lane, delivery: DueDelivery, error: unknown): void {
    this.#settle(lane, crashedOutcome(delivery, this.#now(), error))
  }

  // Frees the attempt's slot and queues its outcome; the delivery stays held until that is written.
  #settle(lane: Lane, outcome: AttemptOutcome): void {
    if (this.#closed) return
    lane.running--
    this.#queueOutcome(lane, outcome)
    this.#schedulePump(lane)
  }

  #queueOutcome(lane: Lane, outcome: AttemptOutcome): void {
    this.#outcomes.push({ lane, outcome })
    this.#recordTimer ??= setTimeout(() => void this.#record(), RECORD_INTERVAL_MS)
  }

  async #send(delivery: DueDelivery, at: number, urls: readonly string[] | undefined): Promise<DestinationResult> {
    const destination = this.#destinations.get(delivery.source)?.get(delivery.destination)
    if (destination === undefined) {
      return {
        ok: false,
        retryable: false,
        attempts: [{ url: '-', error: `the source no longer has the ${delivery.destination} destination`, ms: 0 }],
      }
    }
    try {
      // Only the URLs the breaker let through, when it left some out.
      const subset = urls !== undefined && urls.length < (destination.urls?.length ?? 0)
      return await (subset ? destination.send(delivery.message, { urls }) : destination.send(delivery.message))
    } catch (error) {
      // A destination reports delivery failures in its result; it throws only for a message it
      // can never send (one it cannot format), which retrying would not change.
      return {
        ok: false,
        retryable: false,
        attempts: [{ url: '-', error: `the destination threw: ${(error as Error).message}`, ms: this.#now() - at }],
      }
    }
  }

  async #record(): Promise<void> {
    clearTimeout(this.#recordTimer)
    this.#recordTimer = undefined
    if (this.#recording !== undefined) return // it writes what has come meanwhile when it ends
    const batch = this.#outcomes
    if (batch.length === 0 || this.#closed) return
    this.#outcomes = []
    const writing = this.#store.record(batch.map((b) => b.outcome))
    this.#recording = writing.then(
      () => undefined,
      () => undefined,
    )
    try {
      await writing
    } catch (error) {
      // Keep the outcomes (their deliveries stay held, so none is sent again) and write later.
      this.#recording = undefined
      this.#outcomes = batch.concat(this.#outcomes)
      this.#recordRetryMs = nextBackoff(this.#recordRetryMs)
      log.error(
        `could not record ${plural(batch.length, 'outcome')}: ${(error as Error).message}; attempts paused, writing again in ${this.#recordRetryMs} ms`,
        { event: 'record-failed' },
      )
      if (!this.#closed) this.#recordTimer = setTimeout(() => void this.#record(), this.#recordRetryMs)
      this.#checkIdle()
      return
    }
    this.#recording = undefined
    const recovered = this.#recordRetryMs > 0
    this.#recordRetryMs = 0
    for (const { outcome } of batch) this.#held.delete(outcome.id)
    if (recovered) {
      log.info(`recorded ${plural(batch.length, 'outcome')} after earlier failures; attempts resume`, {
        event: 'record-recovered',
      })
      this.wake()
    } else {
      // A recorded failure may be due again soon: let each lane re-arm its timer.
      for (const lane of new Set(batch.map((b) => b.lane))) this.#schedulePump(lane)
    }
    if (this.#outcomes.length > 0) this.#recordTimer ??= setTimeout(() => void this.#record(), RECORD_INTERVAL_MS)
    this.#checkIdle()
  }

  #isIdle(): boolean {
    if (this.#outcomes.length > 0 || this.#recording !== undefined) return false
    if (this.#breaker?.busy || this.#parking?.busy) return false
    for (const lane of this.#lanes.values()) {
      if (lane.running > 0 || lane.pumpScheduled || lane.claiming) return false
    }
    return true
  }

  #checkIdle(): void {
    if (this.#idleWaiters.length === 0 || !this.#isIdle()) return
    const waiters = this.#idleWaiters
    this.#idleWaiters = []
    for (const resolve of waiters) resolve()
  }
}
