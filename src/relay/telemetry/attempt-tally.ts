import type { Counter, Histogram } from 'prom-client'
import type { SettledAttempt } from '../events/kinds'
import { type StatusClassLabel, statusClass } from './console-metrics'

/** What a settled attempt became, as the `outcome` label says it. */
export type AttemptOutcomeLabel = 'delivered' | 'retried' | 'dead_lettered' | 'filtered'

/** The prom-client series a tally is added to. */
export interface AttemptSeries {
  attempts: Counter<'source' | 'destination' | 'outcome'>
  duration: Histogram<'source' | 'destination'>
  requests: Counter<'source' | 'destination' | 'status_class'>
}

// Durations waiting to be observed, at most: memory stays bounded between scrapes.
const MAX_PENDING_DURATIONS = 1024

/** One route's attempts since the last flush. */
interface RouteTally {
  readonly labels: { readonly source: string; readonly destination: string }
  readonly outcomes: Map<AttemptOutcomeLabel, number>
  readonly statusClasses: Map<StatusClassLabel, number>
  /** Attempt durations, seconds. */
  readonly durations: number[]
}

/**
 * Settled attempts counted in plain numbers and added to their prom-client series in one go: at
 * each scrape (so a scrape shows every attempt settled before it, exactly as if each had been
 * added at once) and whenever a thousand durations wait. Adding to a series costs a label check
 * and a hash of the labels each time; counting here costs two map lookups.
 */
export class AttemptTally {
  readonly #series: AttemptSeries
  /** Tallies by source, then destination. */
  readonly #routes = new Map<string, Map<string, RouteTally>>()
  #pendingDurations = 0

  constructor(series: AttemptSeries) {
    this.#series = series
  }

  /** Counts `attempt`, whose outcome is `outcome`. */
  add(attempt: SettledAttempt, outcome: AttemptOutcomeLabel): void {
    const route = this.#route(attempt.source, attempt.destination)
    route.outcomes.set(outcome, (route.outcomes.get(outcome) ?? 0) + 1)
    for (const request of attempt.outcome.requests) {
      const label = statusClass(request.status)
      route.statusClasses.set(label, (route.statusClasses.get(label) ?? 0) + 1)
    }
    route.durations.push(Math.max(0, attempt.ms) / 1000)
    if (++this.#pendingDurations >= MAX_PENDING_DURATIONS) this.flush()
  }

  /** Adds everything counted to the series and starts over. */
  flush(): void {
    const { attempts, duration, requests } = this.#series
    for (const byDestination of this.#routes.values()) {
      for (const route of byDestination.values()) {
        for (const [outcome, count] of route.outcomes) attempts.inc({ ...route.labels, outcome }, count)
        for (const [status_class, count] of route.statusClasses) requests.inc({ ...route.labels, status_class }, count)
        for (const seconds of route.durations) duration.observe(route.labels, seconds)
        route.outcomes.clear()
        route.statusClasses.clear()
        route.durations.length = 0
      }
    }
    this.#pendingDurations = 0
  }

  #route(source: string, destination: string): RouteTally {
    let byDestination = this.#routes.get(source)
    if (byDestination === undefined) {
      byDestination = new Map()
      this.#routes.set(source, byDestination)
    }
    let route = byDestination.get(destination)
    if (route === undefined) {
      route = { labels: { source, destination }, outcomes: new Map(), statusClasses: new Map(), durations: [] }
      byDestination.set(destination, route)
    }
    return route
  }
}
