import { redactUrl } from '../../shared/redact-url'
import { log, logTime, plural } from '../log'
import type { Circuit, CircuitStore, DeliveryRoute } from '../store/circuits'
import type { DueDelivery } from '../store/store'
import { type BreakerPolicy, nextProbeAt, verdictOf } from './breaker-policy'
import type { DeliveryAttempt } from '../../webhooks/index'
import { Reports, type Unreported } from './breaker-reports'
import { Parking } from './parking'
import { type CircuitSnapshot, snapshotOf } from '../store/circuit-snapshot'
import { Prober } from './prober'
import { type CircuitChanges, openedBy } from '../events/circuit-changes'

/** What the worker gives the breaker: the policy and the shared circuits. */
export interface BreakerConfig extends BreakerPolicy {
  circuits: CircuitStore
  /** A source of numbers in [0, 1) for the probes' jitter. @default Math.random */
  random?: () => number
  /** Told when this relay's own write opened or closed a URL's circuit (alerts). */
  changed?: CircuitChanges
}

/** What the breaker needs from the worker that owns it. */
export interface BreakerHost {
  owner: string
  now: () => number
  /** How long a hold on a probe lasts before another relay may probe, ms (renewed while in flight). */
  leaseTimeout: number
  /** Each URL's routes: the deliveries that go there. */
  routes: ReadonlyMap<string, readonly DeliveryRoute[]>
  /** The retry window, ms: a delivery whose every URL stays open past it is dead-lettered. */
  retryWindow: number
  /** These deliveries are parked: the worker holds them no more. */
  parked(ids: readonly number[]): void
  /** Gives back these leases (deliveries the store would not park), due at once. */
  release(ids: readonly number[]): Promise<void>
  /** The URL's circuit closed or opened, or a slot to it freed: deliveries waiting for it may go. */
  resume(url: string): void
  /** Deliveries were woken in the store (due now): look for work everywhere. */
  wakeAll(): void
  /** This relay holds the URL's probe: start one delivery there. Resolves false when none waits. */
  probe(url: string): Promise<boolean>
  /** A store operation of the breaker ended: the worker may have become idle. */
  settled(): void
}

export type { CircuitSnapshot }

/** What to do with a delivery now, judged from its URLs' circuits and requests in flight. */
export type Plan =
  /** Send to `urls`; `skipped` are left out (their circuit is open, or they are busy), with why. */
  | { kind: 'send'; urls: string[]; skipped: string[] }
  /** Not now: a URL is busy, or its circuit is about to open; the worker is told when to look again. */
  | { kind: 'wait' }
  /** Every URL's circuit is open: hold it back without a request, showing `error` meanwhile. */
  | { kind: 'park'; error: string }
  /** Every URL's circuit is open and the retry window is spent: dead-letter it with `error`. */
  | { kind: 'expire'; error: string }

// While a circuit is open, each relay reads the circuits this often: to learn that another relay
// closed one (and drain), or when the next probe is due.
const POLL_INTERVAL_MS = 1000

/**
 * The circuit breaker of one relay's worker: a circuit per webhook URL (closed → open →
 * half-open), kept in the store so every relay on the database shares it, and a limit on requests
 * in flight per URL.
 *
 * After `failureThreshold` failed requests in a row (timeouts, network errors, 429, 5xx) the
 * URL's circuit opens: no request goes there, and deliveries whose every URL is open are parked.
 * One probe goes at growing intervals (capped, jittered, never before a `Retry-After`), sent by
 * whichever relay takes it first; an answer closes the circuit and, in the same transaction, makes
 * every waiting delivery due at once.
 *
 * Each relay counts its own failures as they come (so it stops sending at once) and writes them
 * to the store every few milliseconds; the store's count decides when the circuit opens. It owns
 * the {@link Parking} of the deliveries it holds back.
 */
export class Breaker {
  readonly #policy: BreakerPolicy
  readonly #circuits: CircuitStore
  readonly #window: number
  readonly #random: () => number
  readonly #changed: CircuitChanges | undefined
  readonly #host: BreakerHost
  /** The circuits with a row in the store, as last read or written by this relay. */
  readonly #view = new Map<string, Circuit>()
  /** Failed requests in a row seen by this relay, including those not yet written. */
  readonly #run = new Map<string, number>()
  /** This relay's requests in flight, per URL. */
  readonly #inFlight = new Map<string, number>()
  /** Results on their way to the store. */
  readonly #reports: Reports
  readonly #prober: Prober
  /** Where deliveries whose every URL is open wait, in the store. */
  readonly #parking: Parking
  #pollTimer: NodeJS.Timeout | undefined
  /** When the circuits were last read from the store (monotonic ms). */
  #readAt = Number.NEGATIVE_INFINITY
  /** Store operations under way (reads, probes): the worker is not idle meanwhile. */
  #busy = 0
  #stopped = false

  constructor(options: BreakerConfig, host: BreakerHost) {
    this.#policy = {
      failureThreshold: options.failureThreshold,
      probeInterval: options.probeInterval,
      maxProbeInterval: options.maxProbeInterval,
      maxInFlightPerUrl: options.maxInFlightPerUrl,
    }
    this.#circuits = options.circuits
    this.#window = host.retryWindow
    this.#random = options.random ?? Math.random
    this.#changed = options.changed
    this.#host = host
    this.#reports = new Reports(
      (url, unreported) => this.#write(url, unreported),
      () => host.settled(),
    )
    this.#prober = new Prober({
      ...host,
      circuits: this.#circuits,
      policy: this.#policy,
      random: this.#random,
      circuit: (url) => this.#view.get(url),
      adopt: (circuit) => this.#adopt(circuit),
      closed: (url, woken, status) => {
        log.warn(
          `circuit of ${redactUrl(url)} closed: the probe was answered; ${plural(woken, 'waiting delivery is', 'waiting deliveries are')} due now`,
          {
            event: 'circuit-closed',
            url,
          },
        )
        this.#forget(url)
        this.#run.set(url, 0)
        this.#changed?.closed(url, status)
        this.#host.wakeAll()
      },
      refresh: (urls) => this.refresh(urls),
    })
    this.#parking = new Parking(this.#circuits, this.#window, {
      owner: host.owner,
      now: host.now,
      parked: (ids) => host.parked(ids),
      refused: (ids, urls) => void this.#unpark(ids, urls),
      settled: () => host.settled(),
    })
  }

  /** Reads the circuits of every URL, so that one left open (by another relay, or before a restart) is known. */
  start(): void {
    void this.refresh()
  }

  /** Work is under way that the worker's `idle()` should wait for. */
  get busy(): boolean {
    return this.#busy > 0 || this.#prober.busy || this.#reports.busy || this.#parking.busy
  }

  /**
   * What to do with a delivery to `urls` whose retry window started at `firstAttemptAt`: send to
   * the URLs that can take it, wait, park it, or dead-letter it. `probe` is a URL whose probe this
   * relay holds: it is sent to although its circuit is open.
   */
  plan(urls: readonly string[], firstAttemptAt: number | undefined, now: number, probe?: string): Plan {
    const send: string[] = []
    const skipped: string[] = []
    let wait = false
    for (const url of urls) {
      if (url === probe) {
        send.push(url)
      } else if (this.#isOpen(url)) {
        skipped.push(`${url}: circuit open`)
      } else if ((this.#run.get(url) ?? 0) >= this.#policy.failureThreshold) {
        // Tripped here, its failures on their way to the store: hold on until the store says.
        wait = true
        skipped.push(`${url}: circuit opening`)
      } else if ((this.#inFlight.get(url) ?? 0) >= this.#policy.maxInFlightPerUrl) {
        wait = true
        skipped.push(`${url}: ${this.#policy.maxInFlightPerUrl} requests in flight`)
      } else {
        send.push(url)
      }
    }
    if (send.length > 0) return { kind: 'send', urls: send, skipped }
    if (wait) return { kind: 'wait' }
    const lastErrors = urls.map((url) => `${url}: ${this.#view.get(url)?.lastError ?? 'circuit open'}`).join('; ')
    if (now >= (firstAttemptAt ?? now) + this.#window) {
      return { kind: 'expire', error: `retry window spent; last error: ${lastErrors}` }
    }
    const waits = urls.map((url) => {
      if (this.#view.get(url)?.state === 'paused') return `${url} paused by an operator`
      const next = this.#view.get(url)?.nextProbeAt
      return `circuit open for ${url}${next === undefined ? '' : ` (next probe at ${new Date(next).toISOString()})`}`
    })
    return { kind: 'park', error: `${waits.join('; ')}; last error: ${lastErrors}` }
  }

  /** Holds back the delivery `id` (leased to this relay) without an attempt, as `plan` said: `park`. */
  park(id: number, urls: readonly string[], error: string): void {
    this.#parking.add(id, urls, error)
  }

  /** Claims, for the probe of `url`, a delivery due to go there (parked ones included), if any. */
  claimProbe(url: string): Promise<DueDelivery | undefined> {
    // A length, not an end: the store leases by its own clock (on PostgreSQL, the database's).
    return this.#circuits.claimProbe(this.#host.routes.get(url) ?? [], this.#host.owner, this.#host.leaseTimeout)
  }

  /** Requests are starting to `urls`. */
  acquire(urls: readonly string[]): void {
    for (const url of urls) this.#inFlight.set(url, (this.#inFlight.get(url) ?? 0) + 1)
  }

  /**
   * The requests of an attempt to `urls` settled, with `requests` as the destination reported
   * them: frees their slots, counts each answer or failure towards its circuit, and settles the
   * probe of `probe`, if the attempt carried one. Never throws.
   */
  settle(urls: readonly string[], requests: readonly DeliveryAttempt[], probe?: string): void {
    for (const url of urls) {
      const count = (this.#inFlight.get(url) ?? 1) - 1
      if (count > 0) this.#inFlight.set(url, count)
      else this.#inFlight.delete(url)
      if (count + 1 >= this.#policy.maxInFlightPerUrl) this.#host.resume(url)
    }
    let probeSettled = false
    for (const request of requests) {
      if (!this.#host.routes.has(request.url) || !urls.includes(request.url)) continue
      const verdict = verdictOf(request)
      if (request.url === probe) {
        probeSettled = true
        void this.#prober.settle(probe, verdict, request)
      } else if (verdict !== undefined) {
        this.#note(request.url, verdict, request)
      }
    }
    // The destination threw before any request: give the probe back unsent.
    if (probe !== undefined && !probeSettled) void this.#prober.settle(probe, undefined, undefined)
  }

  /** Extends this relay's hold on the probes in flight. */
  renewProbes(leaseUntil: number): Promise<void> {
    return this.#prober.renew(leaseUntil)
  }

  /** Each URL's circuit as this relay last saw it, with its requests in flight (for metrics). */
  circuits(): CircuitSnapshot[] {
    return [...this.#host.routes.keys()].map((url) =>
      snapshotOf(url, this.#view.get(url), this.#inFlight.get(url) ?? 0),
    )
  }

  /**
   * Reads the circuits again if the last read is older than a second: called before deliveries
   * just claimed are sent, so that a circuit another relay opened is seen without a request.
   */
  async freshen(): Promise<void> {
    if (performance.now() - this.#readAt >= POLL_INTERVAL_MS) await this.refresh()
  }

  /** Reads the circuits of `urls` (all by default) from the store, as another relay may have changed them. */
  async refresh(urls: readonly string[] = [...this.#host.routes.keys()]): Promise<void> {
    this.#busy++
    try {
      if (urls.length === this.#host.routes.size) this.#readAt = performance.now()
      const circuits = await this.#circuits.get(urls)
      const seen = new Set<string>()
      for (const circuit of circuits) {
        seen.add(circuit.url)
        this.#adopt(circuit)
      }
      for (const url of urls) if (!seen.has(url)) this.#forget(url)
    } catch (error) {
      log.error(`could not read the circuits: ${(error as Error).message}`, { event: 'circuits-read-failed' })
    } finally {
      this.#busy--
      this.#host.settled()
    }
  }

  /** Stops its timers and writes what it has not written yet. Probes it holds run out by themselves. */
  async stop(): Promise<void> {
    await this.#parking.stop()
    this.#stopped = true
    clearTimeout(this.#pollTimer)
    this.#prober.stop()
    await this.#reports.stop()
  }

  // Deliveries the store would not park (a circuit closed meanwhile) are given back, due at once.
  async #unpark(ids: readonly number[], urls: readonly string[]): Promise<void> {
    await this.#host.release(ids)
    await this.refresh(urls)
    this.#host.wakeAll()
  }

  #isOpen(url: string): boolean {
    const state = this.#view.get(url)?.state
    return state !== undefined && state !== 'closed'
  }

  // Counts one request's verdict here at once, and queues it for the store.
  #note(url: string, verdict: 'up' | 'down', request: DeliveryAttempt): void {
    if (verdict === 'up') {
      // A closed circuit with no row, and no failure on its way, has nothing to reset.
      if (!this.#view.has(url) && this.#reports.pending(url) === undefined) return
      this.#run.set(url, 0)
    } else {
      this.#run.set(url, (this.#run.get(url) ?? 0) + 1)
    }
    // A circuit about to open is written at once: deliveries wait for the store's word.
    this.#reports.add(url, verdict, request, (this.#run.get(url) ?? 0) >= this.#policy.failureThreshold)
  }

  async #write(url: string, unreported: Unreported): Promise<void> {
    const now = this.#host.now()
    const routes = this.#host.routes.get(url) ?? []
    if (unreported.answered && this.#view.has(url)) {
      const { wasOpen, woken, paused } = await this.#circuits.succeed(url, routes, now)
      // Paused meanwhile: the pause stands (the next read of the circuits shows it).
      if (!paused) this.#forget(url)
      if (wasOpen) {
        log.warn(
          `circuit of ${redactUrl(url)} closed: a request was answered; ${plural(woken, 'waiting delivery is', 'waiting deliveries are')} due now`,
          {
            event: 'circuit-closed',
            url,
          },
        )
        this.#changed?.closed(url, unreported.answeredStatus)
        this.#host.wakeAll()
      }
    }
    if (unreported.failures === 0) return
    const retryAfter = unreported.retryAfterMs
    const circuit = await this.#circuits.fail({
      url,
      failures: unreported.failures,
      threshold: this.#policy.failureThreshold,
      now,
      firstProbeAt: nextProbeAt(now, 0, this.#policy, this.#random, retryAfter),
      notBefore: retryAfter === undefined ? undefined : now + retryAfter,
      error: unreported.error,
    })
    // The store's run (every relay's) plus what failed here since this write began, unless an
    // answer here broke the run meanwhile.
    const since = this.#reports.pending(url)
    if (since === undefined || !since.answered) this.#run.set(url, circuit.failures + (since?.failures ?? 0))
    if (openedBy(circuit, unreported.failures, this.#policy.failureThreshold))
      this.#changed?.opened(url, circuit.lastError, unreported.status)
    this.#adopt(circuit)
  }

  // Takes a circuit as the store has it: arms its probe and the poll while open, and tells the
  // worker when it opened or closed.
  #adopt(circuit: Circuit): void {
    const { url } = circuit
    const wasOpen = this.#isOpen(url)
    this.#view.set(url, circuit)
    const open = this.#isOpen(url)
    if (open) {
      if (!wasOpen && circuit.state !== 'paused') {
        log.warn(
          `circuit of ${redactUrl(url)} open after ${plural(circuit.failures, 'failed request')} (${circuit.lastError}); next probe at ${logTime(circuit.nextProbeAt ?? 0)}`,
          { event: 'circuit-opened', url, failures: circuit.failures },
        )
      }
      this.#prober.arm(circuit)
      this.#armPoll()
    } else {
      this.#prober.disarm(url)
    }
    if (open !== wasOpen) this.#host.resume(url)
  }

  // The URL has no row any more (closed, by this relay or another): its deliveries may go.
  #forget(url: string): void {
    const wasOpen = this.#isOpen(url)
    this.#view.delete(url)
    this.#prober.disarm(url)
    if (wasOpen) {
      this.#run.set(url, 0)
      this.#host.resume(url)
    }
  }

  #armPoll(): void {
    if (this.#pollTimer !== undefined || this.#stopped) return
    if (![...this.#view.keys()].some((url) => this.#isOpen(url))) return
    this.#pollTimer = setTimeout(() => {
      void this.refresh().then(() => {
        this.#pollTimer = undefined
        this.#armPoll()
      })
    }, POLL_INTERVAL_MS)
    this.#pollTimer.unref()
  }
}
