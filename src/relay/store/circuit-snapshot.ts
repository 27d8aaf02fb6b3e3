import { redactUrl } from '../../shared/redact-url'
import type { Circuit, CircuitState } from './circuits'

/** One URL's circuit as `Breaker.circuits()` shows it, for metrics and the operator page. */
export interface CircuitSnapshot {
  /** The URL by origin and path (never its query string, where tokens travel). */
  url: string
  state: CircuitState
  /** Failed requests in a row, as last seen by this relay. */
  failures: number
  /** When it opened, epoch ms (while not closed). */
  openedAt?: number
  /** When the next probe goes, epoch ms (while not closed). */
  nextProbeAt?: number
  /** This relay's requests in flight to it now. */
  inFlight: number
  lastError?: string
  /** Its limits (docs/delivery-controls.md) and what waits behind them here, when it has any. */
  limit?: EndpointLimitSnapshot
}

/** A limited URL's limits and what this relay holds back behind them. */
export interface EndpointLimitSnapshot {
  ratePerSecond?: number
  maxInFlight?: number
  /** This relay's deliveries waiting for its room now. */
  waiting: number
  /** Deliveries this relay held back for it, ever: by its rate, its requests in flight, a Retry-After. */
  held: Readonly<Record<'rate' | 'in_flight' | 'retry_after', number>>
}

/** The circuit of `url` (none: closed) with this relay's `inFlight` requests there, as metrics show it. */
export function snapshotOf(url: string, circuit: Circuit | undefined, inFlight: number): CircuitSnapshot {
  return {
    url: redactUrl(url),
    state: circuit?.state ?? 'closed',
    failures: circuit?.failures ?? 0,
    ...(circuit?.openedAt === undefined ? {} : { openedAt: circuit.openedAt }),
    ...(circuit?.nextProbeAt === undefined ? {} : { nextProbeAt: circuit.nextProbeAt }),
    inFlight,
    ...(circuit?.lastError === undefined ? {} : { lastError: circuit.lastError }),
  }
}
