import type { Counter, Registry } from 'prom-client'
import type { RoutedSource } from '../config/sources'
import { VIOLATION_KINDS, type Violation } from '../store/violations'
import { promClient } from './prom-client'

// Tracking plans' series (docs/plans.md), kept apart from metrics.ts so that other
// additions there merge cleanly.

/** Violations of tracking plans, registered in a relay's own registry by `RelayMetrics`. */
export class ViolationMetrics {
  readonly #violations: Counter<'source' | 'kind'>

  constructor(registers: Registry[], sources: readonly RoutedSource[]) {
    const { Counter } = promClient()
    this.#violations = new Counter({
      name: 'tracklet_violations_total',
      help: "Violations of a source's tracking plan found at ingest, by kind: unplanned, required, type, additional or other.",
      labelNames: ['source', 'kind'],
      registers,
    })
    this.startSeries(sources)
  }

  /**
   * Every series a source with a plan will have starts at 0, so rate() sees its first increase (at
   * start, and for a plan added while the relay runs). A series already counting keeps its count.
   */
  startSeries(sources: readonly RoutedSource[]): void {
    for (const source of sources) {
      if (source.tracking === undefined) continue
      for (const kind of VIOLATION_KINDS) this.#violations.inc({ source: source.name, kind }, 0)
    }
  }

  /** Counts what a request's messages broke. */
  found(source: string, violations: readonly Violation[]): void {
    for (const violation of violations) this.#violations.inc({ source, kind: violation.kind })
  }
}
