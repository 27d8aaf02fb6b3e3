import type { Counter, Gauge, Registry } from 'prom-client'
import type { CircuitSnapshot } from '../store/circuit-snapshot'
import { promClient } from './prom-client'

// The per-URL limits' series (docs/delivery-controls.md), kept apart from metrics.ts so that
// other additions there merge cleanly. Read from the worker's snapshot at each scrape.

const HELD_REASONS = ['rate', 'in_flight', 'retry_after'] as const

/** The limits of each limited webhook URL and what waits behind them, registered by `RelayMetrics`. */
export class LimitMetrics {
  readonly #rate: Gauge<'url'>
  readonly #maxInFlight: Gauge<'url'>
  readonly #waiting: Gauge<'url'>
  readonly #held: Counter<'url' | 'reason'>
  /** What each held series stood at last scrape: the counter grows by the difference. */
  readonly #heldSeen = new Map<string, number>()

  constructor(registers: Registry[]) {
    const { Counter, Gauge } = promClient()
    this.#rate = new Gauge({
      name: 'tracklet_endpoint_rate_limit',
      help: "Each limited webhook URL's ratePerSecond (by origin and path), held across every relay on the store.",
      labelNames: ['url'],
      registers,
    })
    this.#maxInFlight = new Gauge({
      name: 'tracklet_endpoint_max_in_flight',
      help: "Each limited webhook URL's maxInFlight (by origin and path), held across every relay on the store.",
      labelNames: ['url'],
      registers,
    })
    this.#waiting = new Gauge({
      name: 'tracklet_endpoint_waiting',
      help: "This relay's deliveries waiting now for room on a limited webhook URL (its rate, its requests in flight, or a Retry-After).",
      labelNames: ['url'],
      registers,
    })
    this.#held = new Counter({
      name: 'tracklet_endpoint_held_total',
      help: 'Deliveries this relay held back for a limited webhook URL, by reason: rate, in_flight or retry_after (a 429 with Retry-After). Neither attempts nor failures.',
      labelNames: ['url', 'reason'],
      registers,
    })
  }

  /** Sets the series from the worker's view of its URLs. */
  read(circuits: readonly CircuitSnapshot[]): void {
    this.#rate.reset()
    this.#maxInFlight.reset()
    this.#waiting.reset()
    for (const { url, limit } of circuits) {
      if (limit === undefined) continue
      if (limit.ratePerSecond !== undefined) this.#rate.set({ url }, limit.ratePerSecond)
      if (limit.maxInFlight !== undefined) this.#maxInFlight.set({ url }, limit.maxInFlight)
      this.#waiting.set({ url }, limit.waiting)
      for (const reason of HELD_REASONS) {
        const key = `${url} ${reason}`
        const grown = limit.held[reason] - (this.#heldSeen.get(key) ?? 0)
        this.#heldSeen.set(key, limit.held[reason])
        this.#held.inc({ url, reason }, Math.max(0, grown))
      }
    }
  }
}
