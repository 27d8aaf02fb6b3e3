import type { Counter, Histogram, Registry } from 'prom-client'
import { promClient } from './prom-client'

// Functions' series (docs/functions.md), kept apart from metrics.ts so that other additions there
// merge cleanly.

// A trivial call takes tens of microseconds; a slow one runs up to functionTimeout (1 s by default).
const FUNCTION_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.1, 0.5, 1, 5]

/** Calls of destinations' functions, registered in a relay's own registry by {@link RelayMetrics}. */
export class FunctionMetrics {
  readonly #calls: Counter<'source' | 'outcome'>
  readonly #duration: Histogram

  constructor(registers: Registry[]) {
    const { Counter, Histogram } = promClient()
    this.#calls = new Counter({
      name: 'tracklet_function_calls_total',
      help: "Calls of a destination's function by what they came to: sent, dropped, retry, error, timeout or memory.",
      labelNames: ['source', 'outcome'],
      registers,
    })
    this.#duration = new Histogram({
      name: 'tracklet_function_duration_seconds',
      help: "How long one call of a destination's function ran in its sandbox, seconds.",
      buckets: FUNCTION_BUCKETS,
      registers,
    })
  }

  /** Counts one call of `source`'s function: what it came to (`outcomeLabel`) and how long it ran. */
  called(source: string, outcome: string, ms: number): void {
    this.#calls.inc({ source, outcome })
    this.#duration.observe(ms / 1000)
  }
}
