import type { Worker } from 'node:cluster'
import type { Registry } from 'prom-client'
import type { RecentRates } from '../../relay/events/readings'
import type { MetricsSnapshot } from '../../relay/telemetry/metrics'
import { promClient } from '../../relay/telemetry/prom-client'
import type { FiguresKind, GatheredMessage, GatherMessage, ReportedMessage, ReportMessage } from './messages'

/** How long the primary waits for every worker's own figures before answering without the late ones, ms. */
export const REPORT_TIMEOUT_MS = 5000

/**
 * How each gauge of a relay adds up over its workers, by what it means (counters and histograms
 * are summed, prom-client's default; gauges not named here are summed too, the process's own
 * carry their aggregator from prom-client):
 * - `max`: a store-wide reading every worker would give alike (the outbox, read by one worker per
 *   scrape), or one that is 1 whoever reports it (the build);
 * - `min`: the store takes writes only if every worker can write (0 when one cannot);
 * - `per-worker`: each worker's own view, kept apart under a `worker` label (its circuits as its
 *   breaker last read them, its clock's offset to the database's).
 * `tracklet_webhook_requests_in_flight` is summed: each worker's requests are its own.
 */
export const GAUGE_AGGREGATION: Readonly<Record<string, 'max' | 'min' | 'per-worker'>> = {
  tracklet_outbox_deliveries: 'max',
  tracklet_outbox_oldest_age_seconds: 'max',
  tracklet_build_info: 'max',
  // Read from the store: every worker sees the same count (docs/delivery-controls.md).
  tracklet_deliveries_waiting_for_order: 'max',
  // Each worker reports the same configured limit (docs/delivery-controls.md).
  tracklet_endpoint_rate_limit: 'max',
  tracklet_endpoint_max_in_flight: 'max',
  tracklet_store_writable: 'min',
  tracklet_circuit_state: 'per-worker',
  tracklet_clock_offset_seconds: 'per-worker',
}

/** A worker the primary can ask: its slot's number and its current process, if started. */
export interface ReportingWorker {
  number: number
  worker: Worker | undefined
  started: boolean
}

interface Pending {
  what: FiguresKind
  waiting: Set<number>
  reports: Map<number, ReportedMessage>
  finish: () => void
}

/**
 * The relay's figures under `tracklet relay --workers N`, gathered by the primary: a worker that a
 * scrape (or the operator page) reaches asks; the primary asks every worker for its own series and
 * answers with one set, added up with prom-client's `AggregatorRegistry.aggregate` (as its
 * `clusterMetrics` does, but over this module's own messages: each worker reads its figures at the
 * scrape first, and only one reads the store-wide gauges).
 *
 * Counters never go down between scrapes: a worker that does not answer in time counts with the
 * counters of its last answer, and the counters of a worker process that died stay in the sum
 * (those it counted after its last scrape are lost, as a restart loses them).
 */
export class PoolFigures {
  readonly #workers: () => readonly ReportingWorker[]
  #nextId = 0
  readonly #pending = new Map<number, Pending>()
  /** Each slot's last answer (of its current process). */
  readonly #last = new Map<number, MetricsSnapshot>()
  /** Each slot's counters and histograms of its processes gone, summed. */
  readonly #retired = new Map<number, MetricsSnapshot>()

  constructor(workers: () => readonly ReportingWorker[]) {
    this.#workers = workers
  }

  /** A message from the worker of slot `number`: a request to gather, or its report. */
  received(number: number, message: GatherMessage | ReportedMessage): void {
    if (message.kind === 'tracklet-relay-reported') {
      const pending = this.#pending.get(message.id)
      if (pending === undefined || !pending.waiting.delete(number)) return
      pending.reports.set(number, message)
      if (pending.waiting.size === 0) pending.finish()
      return
    }
    const asker = this.#workers().find((slot) => slot.number === number)?.worker
    void this.#gather(number, message.what).then(
      (answer) => asker?.isConnected() && asker.send({ ...answer, kind: 'tracklet-relay-gathered', id: message.id }),
    )
  }

  /** The process of slot `number` is gone: its counters stay in the sum. */
  async retire(number: number): Promise<void> {
    const last = this.#last.get(number)
    if (last === undefined) return
    this.#last.delete(number)
    const before = this.#retired.get(number)
    const merged = before === undefined ? monotonic(last) : await sum([before, monotonic(last)])
    this.#retired.set(number, merged)
  }

  async #gather(asker: number, what: FiguresKind): Promise<Omit<GatheredMessage, 'kind' | 'id'>> {
    const reports = await this.#ask(asker, what)
    try {
      if (what === 'rates') return { rates: sumRates([...reports.values()].flatMap((r) => r.rates ?? [])) }
      if (what === 'hour') return { hour: [...reports.values()].flatMap((r) => r.hour ?? []) }
      const snapshots: MetricsSnapshot[] = [...this.#retired.values()]
      for (const slot of this.#workers()) {
        const report = reports.get(slot.number)
        if (report?.metrics !== undefined) {
          this.#last.set(slot.number, report.metrics)
          snapshots.push(labelled(report.metrics, slot.number))
        } else {
          // No answer in time: its counters as last reported, never fewer.
          const last = this.#last.get(slot.number)
          if (last !== undefined) snapshots.push(monotonic(last))
        }
      }
      const registry = promClient().AggregatorRegistry.aggregate(snapshots)
      return { metrics: { contentType: registry.contentType, text: await registry.metrics() } }
    } catch (error) {
      return { error: (error as Error).message }
    }
  }

  // Asks every started worker for its own figures; resolves with the answers that came in time.
  #ask(asker: number, what: FiguresKind): Promise<Map<number, ReportedMessage>> {
    const id = this.#nextId++
    return new Promise((resolve) => {
      const pending: Pending = { what, waiting: new Set(), reports: new Map(), finish: () => {} }
      const timer = setTimeout(() => pending.finish(), REPORT_TIMEOUT_MS)
      pending.finish = () => {
        clearTimeout(timer)
        this.#pending.delete(id)
        resolve(pending.reports)
      }
      this.#pending.set(id, pending)
      for (const slot of this.#workers()) {
        if (!slot.started || slot.worker === undefined || !slot.worker.isConnected()) continue
        pending.waiting.add(slot.number)
        const request: ReportMessage = {
          kind: 'tracklet-relay-report',
          id,
          what,
          storeWide: slot.number === asker,
        }
        slot.worker.send(request)
      }
      if (pending.waiting.size === 0) pending.finish()
    })
  }
}

// The series with the gauges' aggregation set by what they mean, and a `worker` label on those
// kept per worker.
function labelled(snapshot: MetricsSnapshot, worker: number): MetricsSnapshot {
  return snapshot.map((metric) => {
    const how = GAUGE_AGGREGATION[metric.name]
    if (how === undefined) return metric
    if (how !== 'per-worker') return { ...metric, aggregator: how }
    return {
      ...metric,
      aggregator: 'sum',
      values: metric.values.map((value) => ({ ...value, labels: { ...value.labels, worker: String(worker) } })),
    }
  })
}

// Only what only goes up: counters and histograms.
function monotonic(snapshot: MetricsSnapshot): MetricsSnapshot {
  return snapshot.filter((metric) => {
    const type = metric.type as unknown as string
    return type === 'counter' || type === 'histogram'
  })
}

async function sum(snapshots: MetricsSnapshot[]): Promise<MetricsSnapshot> {
  const registry: Registry = promClient().AggregatorRegistry.aggregate(snapshots)
  return (await registry.getMetricsAsJSON()) as MetricsSnapshot
}

function sumRates(all: readonly RecentRates[]): RecentRates {
  const total: RecentRates = { ingested: 0, delivered: 0, retried: 0, deadLettered: 0, minutes: all[0]?.minutes ?? 0 }
  for (const rates of all) {
    total.ingested += rates.ingested
    total.delivered += rates.delivered
    total.retried += rates.retried
    total.deadLettered += rates.deadLettered
  }
  return total
}
