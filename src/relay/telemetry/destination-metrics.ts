import type { Counter, Gauge, Registry } from 'prom-client'
import type { RoutedSource } from '../config/sources'
import type { DestinationModule } from '../destinations/destination'
import type { SettledAttempt } from '../events/kinds'
import { log } from '../log'
import type { Store } from '../store/store'
import { promClient } from './prom-client'

// The destinations' own series (docs/archive.md, docs/warehouse.md), declared by each module
// (`metrics`, `lagMetric`) and kept apart from metrics.ts: a new destination's series need no
// line here.

/** Each module's counters and lag gauge, in a relay's own registry, fed from settled attempts. */
export class DestinationMetrics {
  /** By destination name: its counters, each with how a delivered message's detail feeds it. */
  readonly #counters = new Map<
    string,
    { counter: Counter<'source'>; count: (detail: Readonly<Record<string, unknown>>) => number }[]
  >()
  /** By destination name: its lag gauge. */
  readonly #lags = new Map<string, Gauge<'source'>>()
  #sources: readonly RoutedSource[]

  constructor(registers: Registry[], modules: readonly DestinationModule[], sources: readonly RoutedSource[]) {
    const { Counter, Gauge } = promClient()
    for (const module of modules) {
      const counters = (module.metrics ?? []).map((metric) => ({
        counter: new Counter({ name: metric.name, help: metric.help, labelNames: ['source'], registers }),
        count: metric.count,
      }))
      if (counters.length > 0) this.#counters.set(module.name, counters)
      if (module.lagMetric !== undefined) {
        const { name, help } = module.lagMetric
        this.#lags.set(module.name, new Gauge({ name, help, labelNames: ['source'], registers }))
      }
    }
    this.#sources = sources
    this.startSeries(sources)
  }

  /** Every series a source's destinations have starts at 0, so rate() sees its first increase. */
  startSeries(sources: readonly RoutedSource[]): void {
    this.#sources = sources
    for (const source of sources) {
      for (const destination of source.destinations) {
        for (const { counter } of this.#counters.get(destination) ?? []) counter.inc({ source: source.name }, 0)
      }
    }
  }

  /** A delivered attempt's detail, counted by its destination's counters. */
  attemptSettled(attempt: SettledAttempt): void {
    const { detail } = attempt.outcome
    if (detail === undefined || attempt.outcome.next.status !== 'delivered') return
    for (const { counter, count } of this.#counters.get(attempt.destination) ?? []) {
      const by = count(detail)
      if (by > 0) counter.inc({ source: attempt.source }, by)
    }
  }

  /**
   * Sets each lag gauge from the outbox: seconds since the oldest delivery still pending for the
   * destination was written (when its message was received), 0 when none waits.
   */
  async readLags(store: Store, now: number): Promise<void> {
    for (const [destination, gauge] of this.#lags) {
      gauge.reset()
      for (const source of this.#sources) {
        if (!source.destinations.includes(destination)) continue
        try {
          // The endpoints view's count of one route: no request is ever made to this placeholder.
          const url = `lag:${source.name}/${destination}`
          const routes = [{ source: source.name, destination }]
          const [view] = await store.endpoints({ endpoints: [{ url, routes }], now })
          const oldest = view?.oldestPendingAt
          gauge.set({ source: source.name }, oldest === undefined ? 0 : Math.max(0, now - oldest) / 1000)
        } catch (error) {
          log.error(`metrics: could not read the ${destination} lag: ${(error as Error).message}`, {
            event: 'metrics-failed',
          })
        }
      }
    }
  }
}
