import type { DeliveryRoute } from '../store/circuits'
import type { SettledAttempt } from '../events/kinds'
import type { Store } from '../store/store'
import type { BreakerConfig } from './breaker'
import type { DeliveryStep } from './delivery-step'
import type { DestinationSender, RetryPolicy } from './destination'
import type { EndpointLimitStore } from '../store/endpoint-limits'

/**
 * What the worker asks of the store: its claims, leases and outcomes (the live outbox's, or a
 * replay lane's claims over the same outbox: `features/replay/lane.ts`).
 */
export type WorkerStore = Pick<Store, 'claim' | 'nextDueIn' | 'renew' | 'release' | 'record'>

/** What the worker needs: the store, each source's destinations by name, and the retry rule. */
export interface WorkerOptions {
  store: WorkerStore
  /** Source name → destination name → its sender. */
  destinations: ReadonlyMap<string, ReadonlyMap<string, DestinationSender>>
  /**
   * The retry rule of a delivery whose destination is gone, and the window the breaker keeps to;
   * each sender's own rule judges its attempts.
   */
  retries: RetryPolicy
  /** Deliveries in flight at once, per source. */
  concurrency: number
  /** How long a claim holds before another relay may take the work, ms; renewed while in flight. */
  leaseTimeout: number
  /** This relay's id, written with its leases. @default 12 random characters */
  owner?: string
  /**
   * The circuit breaker per URL and the limit on requests in flight per URL, for destinations that
   * send to URLs. Without it, every due delivery is attempted.
   */
  breaker?: BreakerConfig
  /**
   * The per-URL limits' shared budget (docs/delivery-controls.md) and how long a slot taken there
   * is leased. Without it, a destination's target limits are not held.
   */
  limits?: { store: EndpointLimitStore; slotLeaseMs: number }
  /** The step each delivery passes through before it takes a URL's slot and is formatted (`delivery-step.ts`): the functions. */
  step?: DeliveryStep | undefined
  /** Told of every attempt's outcome as it settles (metrics). Must not throw. */
  observe?: (attempt: SettledAttempt) => void
  now?: () => number
}

/** Each URL's routes: the source and destination of the deliveries that go there. */
export function routesByUrl(destinations: WorkerOptions['destinations']): Map<string, DeliveryRoute[]> {
  const routes = new Map<string, DeliveryRoute[]>()
  for (const [source, named] of destinations) {
    for (const [destination, { targets }] of named) {
      for (const url of new Set(targets)) routes.set(url, [...(routes.get(url) ?? []), { source, destination }])
    }
  }
  return routes
}

/**
 * What one attempt sends, as the breaker planned it: to `urls`, leaving out `skipped` (with why),
 * carrying the probe of `probe` when this relay holds it.
 */
export interface Sending {
  urls: string[]
  skipped: string[]
  probe?: string
}
