import type { Counter, Gauge, Histogram, MetricObjectWithValues, MetricValue, Registry } from 'prom-client'
import { type IngestOutcome, REFUSAL_KINDS, type RefusalKind, type SettledAttempt } from '../events/kinds'
import type { LastHour, RecentRates } from '../events/readings'
import { FunctionMetrics } from './function-metrics'
import { ViolationMetrics } from './violation-metrics'
import { LimitMetrics } from './limit-metrics'
import { DestinationMetrics } from './destination-metrics'
import { DESTINATIONS } from '../destinations/index'
import { log } from '../log'
import type { RoutedSource } from '../config/sources'
import type { CircuitSnapshot } from '../store/circuit-snapshot'
import type { Store } from '../store/store'
import { CLOCK_OFFSET_WARN_MS } from './clock-offset'
import { HttpError } from '../http/http-error'
import type { StoreHealth } from './health'
import { ConsoleMetrics } from './console-metrics'
import { EventRates } from './rates'
import { AttemptTally, type AttemptOutcomeLabel } from './attempt-tally'
import { promClient } from './prom-client'
import { outcomeLabel } from './outcome-label'
import { ReplayMetrics } from './replay-metrics'
import { orderMetrics } from './order-metrics'

/** What the metrics read at scrape time besides their own counters. */
export interface RelayMetricsOptions {
  store: Store
  sources: readonly RoutedSource[]
  health: StoreHealth
  /** The circuit breaker's view of each webhook URL (the worker's), read at each scrape. */
  circuits?: () => readonly CircuitSnapshot[]
  now?: () => number
}

export type { AttemptOutcomeLabel }

/**
 * What `/metrics` and the operator page read of a relay: its {@link RelayMetrics}, or under
 * `tracklet relay --workers N` every worker's together (gathered by the primary).
 */
export interface RelayFigures {
  /** The Prometheus text exposition, read now. */
  scrape(): Promise<{ contentType: string; text: string }>
  /** Ingest and delivery outcomes per minute, over the last few minutes. */
  recentRates(): RecentRates | Promise<RecentRates>
  /**
   * The last hour minute by minute, for the page's charts: under `--workers`, every worker's.
   * Absent: this process's own history is the relay's.
   */
  lastHour?(): Promise<LastHour>
}

/** One relay process's series as prom-client's JSON gives them, for the primary to add together. */
export type MetricsSnapshot = MetricObjectWithValues<MetricValue<string>>[]

// The operator page's rates cover this long; Prometheus keeps the history.
const RATE_WINDOW_MINUTES = 5

/** Why a message of an accepted request was refused, as the `reason` label says it: its refusal's kind. */
export type MessageRefusalLabel = RefusalKind

// The upper bounds of the attempt duration buckets, seconds: from a fast local receiver to the
// longest webhook timeout anyone should set.
const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]

// The statuses the outbox gauges show: deliveries still waiting (delivered ones are history).
const WAITING_STATUSES = ['pending', 'failed'] as const

// The process's own metrics (CPU, memory, event loop, GC) describe the process, not a relay, and
// prom-client's collector never stops once started: one registry for them, shared by every relay
// of the process and created with the first.
let processRegistry: Registry | undefined
function processMetrics(): Registry {
  if (processRegistry === undefined) {
    const { Registry, collectDefaultMetrics } = promClient()
    processRegistry = new Registry()
    collectDefaultMetrics({ register: processRegistry })
  }
  return processRegistry
}

/**
 * One relay's Prometheus metrics, in a registry of its own (never prom-client's global one, so
 * several relays in one process keep separate counts). Counters are fed by ingest and the worker;
 * the outbox gauges are read from the store at each scrape. Label values are source and
 * destination names and a few fixed words: never a write key, a URL or a message field.
 */
export class RelayMetrics {
  readonly #options: RelayMetricsOptions
  readonly #now: () => number
  /** This relay's metrics only. */
  readonly #own: Registry = new (promClient().Registry)()
  /** This relay's metrics and the process's, as a scrape shows them. */
  readonly #exposed: Registry
  readonly #ingested: Counter<'source'>
  readonly #refusedMessages: Counter<'source' | 'reason'>
  readonly #refusedRequests: Counter<'reason'>
  readonly #filtered: Counter<'source'>
  /** Replays' copies, counted apart from live delivery's. */
  readonly replays: ReplayMetrics
  readonly #attempts: Counter<'source' | 'destination' | 'outcome'>
  readonly #duration: Histogram<'source' | 'destination'>
  readonly #outboxDeliveries: Gauge<'source' | 'status'>
  readonly #outboxOldestAge: Gauge<'source' | 'status'>
  readonly #storeWritable: Gauge
  readonly #circuitState: Gauge<'url' | 'state'>
  readonly #urlInFlight: Gauge<'url'>
  /** The per-URL limits' series (docs/delivery-controls.md). */
  readonly #limits: LimitMetrics
  /** The clock offset's reader ({@link RelayMetrics.clockOffset}); none on SQLite. */
  #clockOffset: (() => number | undefined) | undefined
  /** Issue 20's series: ingest durations, answers by status class, build info. */
  readonly console: ConsoleMetrics
  /** Calls of destinations' functions (docs/functions.md). */
  readonly functions: FunctionMetrics
  /** Violations of tracking plans (docs/plans.md). */
  readonly violations: ViolationMetrics
  /** The destinations' own series (an archive's files, a warehouse's conflicts). */
  readonly destinations: DestinationMetrics
  /** Settled attempts not yet added to their series (a scrape adds them first). */
  readonly #tally: AttemptTally
  /** Recent events, for the operator page's rates. */
  readonly #rates: EventRates<'ingested' | AttemptOutcomeLabel>

  constructor(options: RelayMetricsOptions) {
    this.#options = options
    this.#now = options.now ?? Date.now
    this.#rates = new EventRates(RATE_WINDOW_MINUTES * 60_000, this.#now)
    const { Counter, Gauge, Histogram, Registry } = promClient()
    const registers = [this.#own]
    this.#ingested = new Counter({
      name: 'tracklet_messages_ingested_total',
      help: 'Messages accepted: valid, and durably written to the outbox for every destination they go to.',
      labelNames: ['source'],
      registers,
    })
    this.#refusedMessages = new Counter({
      name: 'tracklet_messages_refused_total',
      help: 'Messages of an accepted request refused on their own: invalid, or over the 32,000-byte limit (too_large).',
      labelNames: ['source', 'reason'],
      registers,
    })
    this.#refusedRequests = new Counter({
      name: 'tracklet_ingest_requests_refused_total',
      help: 'Ingest requests refused whole, by error code (unauthorized, malformed_json, body_too_large, outbox_unavailable, ...).',
      labelNames: ['reason'],
      registers,
    })
    this.#filtered = new Counter({
      name: 'tracklet_messages_filtered_total',
      help: "Messages accepted but not delivered: blocked by the source's schema or tracking plan, or from a suppressed user.",
      labelNames: ['source'],
      registers,
    })
    this.replays = new ReplayMetrics(registers)
    this.#attempts = new Counter({
      name: 'tracklet_delivery_attempts_total',
      help: 'Delivery attempts by what became of them: delivered, retried (due again later) or dead_lettered.',
      labelNames: ['source', 'destination', 'outcome'],
      registers,
    })
    this.#duration = new Histogram({
      name: 'tracklet_delivery_attempt_duration_seconds',
      help: 'How long one delivery attempt took (all requests of its fan-out, concurrently), seconds.',
      labelNames: ['source', 'destination'],
      buckets: DURATION_BUCKETS,
      registers,
    })
    this.#outboxDeliveries = new Gauge({
      name: 'tracklet_outbox_deliveries',
      help: 'Deliveries waiting in the outbox: pending (to be attempted) or failed (dead-lettered, waiting for a retry by hand).',
      labelNames: ['source', 'status'],
      registers,
    })
    this.#outboxOldestAge = new Gauge({
      name: 'tracklet_outbox_oldest_age_seconds',
      help: 'Age of the oldest waiting delivery, seconds since it was written (0 when none waits).',
      labelNames: ['source', 'status'],
      registers,
    })
    this.#storeWritable = new Gauge({
      name: 'tracklet_store_writable',
      help: '1 while the store takes writes, 0 while /healthz answers 503.',
      registers,
    })
    this.#circuitState = new Gauge({
      name: 'tracklet_circuit_state',
      help: 'The circuit breaker of each webhook URL this relay has sent to (by origin and path): 1 for its current state (closed, open, half-open or paused), 0 for the others.',
      labelNames: ['url', 'state'],
      registers,
    })
    this.#limits = new LimitMetrics(registers)
    this.#urlInFlight = new Gauge({
      name: 'tracklet_webhook_requests_in_flight',
      help: "This relay's requests in flight to each webhook URL (by origin and path), bounded by maxInFlightPerUrl.",
      labelNames: ['url'],
      registers,
    })
    // Declared whatever the store (every family is, so dashboards and rules never miss one); a
    // sample only on PostgreSQL, where clockOffset() gives it a reader.
    const metrics = this
    new Gauge({
      name: 'tracklet_clock_offset_seconds',
      help: `The database's clock minus this relay's, seconds, measured every minute: leases and due times follow the database's clock; past ${CLOCK_OFFSET_WARN_MS / 1000} s the relay warns (check NTP).`,
      registers,
      collect() {
        const reader = metrics.#clockOffset
        // NaN until the first measurement: not a 0 that would claim the clocks agree.
        if (reader === undefined) this.remove()
        else this.set(reader() ?? Number.NaN)
      },
    })
    this.functions = new FunctionMetrics(registers)
    this.violations = new ViolationMetrics(registers, options.sources)
    orderMetrics(registers, options.store)
    this.destinations = new DestinationMetrics(registers, DESTINATIONS, options.sources)
    this.console = new ConsoleMetrics(registers, routesOf(options.sources))
    this.#startSeries(options.sources)
    this.#tally = new AttemptTally({
      attempts: this.#attempts,
      duration: this.#duration,
      requests: this.console.requests,
    })
    this.#exposed = Registry.merge([processMetrics(), this.#own])
  }

  /**
   * The sources changed while the relay runs (the admin API, a reload): the series of those added
   * start at 0 too. A removed source's series stay until the relay restarts, as Prometheus expects
   * of a counter.
   */
  sourcesChanged(sources: readonly RoutedSource[]): void {
    this.#startSeries(sources)
    this.violations.startSeries(sources)
    this.destinations.startSeries(sources)
    this.console.startSeries(routesOf(sources))
  }

  // Every series a configured source will have starts at 0, so rate() sees its first increase.
  // Adding 0 to a series that is counting changes nothing, so this may run again on a change.
  #startSeries(sources: readonly RoutedSource[]): void {
    for (const source of sources) {
      this.#ingested.inc({ source: source.name }, 0)
      this.#filtered.inc({ source: source.name }, 0)
      for (const reason of REFUSAL_KINDS) this.#refusedMessages.inc({ source: source.name, reason }, 0)
      for (const destination of source.destinations) {
        for (const outcome of ['delivered', 'retried', 'dead_lettered'] satisfies AttemptOutcomeLabel[])
          this.#attempts.inc({ source: source.name, destination, outcome }, 0)
      }
    }
  }

  /** An ingest request was answered: count what it accepted and refused. */
  ingested(source: string, { accepted, refused }: Pick<IngestOutcome, 'accepted' | 'refused'>): void {
    if (accepted > 0) this.#ingested.inc({ source }, accepted)
    this.#rates.add('ingested', accepted)
    for (const refusal of refused) this.#refusedMessages.inc({ source, reason: refusal.kind })
  }

  /** An ingest request was refused whole (no message of it was read or stored). */
  requestRefused(error: unknown): void {
    this.#refusedRequests.inc({ reason: requestRefusalLabel(error) })
  }

  /** `count` messages of `source` were accepted and dropped by its schema (blocked events). */
  filtered(source: string, count = 1): void {
    this.#filtered.inc({ source }, count)
  }

  /** An attempt settled (the worker's `observe`). Never throws. */
  attemptSettled(attempt: SettledAttempt): void {
    try {
      const outcome = outcomeLabel(attempt)
      this.#tally.add(attempt, outcome)
      this.destinations.attemptSettled(attempt)
      this.#rates.add(outcome)
    } catch (error) {
      log.error(`metrics: could not count an attempt: ${(error as Error).message}`, { event: 'internal-error' })
    }
  }

  /** Ingest and delivery outcomes per minute, over the last few minutes. */
  recentRates(): RecentRates {
    return {
      ingested: this.#rates.perMinute('ingested'),
      delivered: this.#rates.perMinute('delivered'),
      retried: this.#rates.perMinute('retried'),
      deadLettered: this.#rates.perMinute('dead_lettered'),
      minutes: RATE_WINDOW_MINUTES,
    }
  }

  /** The Prometheus text exposition of this relay's metrics and the process's, read now. */
  async scrape(): Promise<{ contentType: string; text: string }> {
    await this.#readNow(true)
    return { contentType: this.#exposed.contentType, text: await this.#exposed.metrics() }
  }

  /**
   * This process's series as JSON, read now, for the primary of `--workers` to add to the others'.
   * `storeWide`: with the outbox gauges, which read the shared store (one worker per scrape reads
   * them, not each).
   */
  async snapshot(storeWide: boolean): Promise<MetricsSnapshot> {
    await this.#readNow(storeWide)
    return (await this.#exposed.getMetricsAsJSON()) as MetricsSnapshot
  }

  async #readNow(storeWide: boolean): Promise<void> {
    if (storeWide) {
      await this.#readOutbox()
      await this.destinations.readLags(this.#options.store, this.#now())
    } else {
      this.#outboxDeliveries.reset()
      this.#outboxOldestAge.reset()
    }
    this.#readCircuits()
    this.#storeWritable.set(this.#options.health.report().ok ? 1 : 0)
    this.#tally.flush()
  }

  #readCircuits(): void {
    this.#circuitState.reset()
    this.#urlInFlight.reset()
    for (const circuit of this.#options.circuits?.() ?? []) {
      for (const state of CIRCUIT_STATES) {
        this.#circuitState.set({ url: circuit.url, state }, circuit.state === state ? 1 : 0)
      }
      this.#urlInFlight.set({ url: circuit.url }, circuit.inFlight)
    }
    this.#limits.read(this.#options.circuits?.() ?? [])
  }

  // Sets the outbox gauges from one backlog query: 0 for every configured source with nothing
  // waiting; sources no longer configured appear while they still have deliveries waiting.
  async #readOutbox(): Promise<void> {
    this.#outboxDeliveries.reset()
    this.#outboxOldestAge.reset()
    let rows: Awaited<ReturnType<Store['backlog']>>
    try {
      rows = await this.#options.store.backlog()
    } catch (error) {
      // Without the gauges (not stale values); tracklet_store_writable and /healthz say more.
      log.error(`metrics: could not read the outbox backlog: ${(error as Error).message}`, { event: 'metrics-failed' })
      return
    }
    for (const source of this.#options.sources) {
      for (const status of WAITING_STATUSES) {
        this.#outboxDeliveries.set({ source: source.name, status }, 0)
        this.#outboxOldestAge.set({ source: source.name, status }, 0)
      }
    }
    const now = this.#now()
    for (const row of rows) {
      const labels = { source: row.source, status: row.status }
      this.#outboxDeliveries.set(labels, row.count)
      this.#outboxOldestAge.set(labels, Math.max(0, now - row.oldestCreatedAt) / 1000)
    }
  }

  /**
   * Feeds `tracklet_clock_offset_seconds` from `seconds` (this relay's `ClockOffset`: the
   * database's clock minus this relay's; NaN until first measured), read at each scrape. Only a
   * relay on PostgreSQL has one (on SQLite the store's clock is the process's own): without it the
   * family is declared with no sample.
   */
  clockOffset(seconds: () => number | undefined): void {
    this.#clockOffset = seconds
  }
}

const CIRCUIT_STATES = ['closed', 'open', 'half-open', 'paused'] as const

// An HttpError's stable code as a label (`ERR_BODY_TOO_LARGE` → `body_too_large`): a small, fixed
// set. Anything else is the relay's own failure.
function requestRefusalLabel(error: unknown): string {
  return error instanceof HttpError ? error.code.replace(/^ERR_/, '').toLowerCase() : 'internal'
}

// Each source's routes (source and destination), as the webhook requests are counted.
function routesOf(sources: readonly RoutedSource[]): { source: string; destination: string }[] {
  return sources.flatMap((source) => source.destinations.map((destination) => ({ source: source.name, destination })))
}
