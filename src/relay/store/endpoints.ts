import { redactUrl } from '../../shared/redact-url'
import type { Circuit, CircuitState, DeliveryRoute } from './circuits'
import { endpointId } from '../kit/endpoint-id'

export { endpointId }

/** The span the endpoints view counts requests and latency over, ms. */
export const RECENT_MS = 5 * 60_000

/**
 * How far back the endpoints view looks for a URL's last failed request, ms: bounded, so that a
 * URL that has answered for months is not searched to its first request.
 */
export const LAST_FAILURE_LOOKBACK_MS = 60 * 60_000

/** What {@link Store.endpoints} is asked about: each webhook URL with the routes that send there. */
export interface EndpointQuery {
  endpoints: readonly { url: string; routes: readonly DeliveryRoute[] }[]
  /** The instant the last five minutes end at, epoch ms. */
  now: number
}

/** A failed request, as the endpoints view shows the last one. */
export interface EndpointFailure {
  /** When the attempt started, epoch ms. */
  at: number
  /** The HTTP status, when the receiver answered. */
  status?: number
  /** Why it failed (`HTTP 500`, `timed out after 5000 ms…`). */
  error: string
  /** The start of the receiver's answer, when it was kept. */
  responseBody?: string
}

/** One webhook URL as the operator's endpoints view shows it. */
export interface EndpointView {
  /** A stable, URL-safe id of the URL (see {@link endpointId}), for `/v1/endpoints/:id/…`. */
  id: string
  /** The URL by origin and path: never its query string, where tokens travel. */
  url: string
  /** The sources that send there. */
  sources: string[]
  state: CircuitState
  /** Failed requests in a row. */
  failures: number
  /** When the circuit opened, epoch ms (while open or half-open). */
  openedAt?: number
  /** When an operator paused it, epoch ms (while paused). */
  pausedAt?: number
  /**
   * When the next probe may go, epoch ms: only while open (half-open: a probe is in flight;
   * paused: none goes until it is resumed).
   */
  nextProbeAt?: number
  /** The last failed request (within {@link LAST_FAILURE_LOOKBACK_MS}), or the circuit's last error. */
  lastFailure?: EndpointFailure
  /** Deliveries pending for its routes (waiting, parked or in flight). */
  pending: number
  /** When the oldest of them was written, epoch ms (none pending: absent): an archive's lag. */
  oldestPendingAt?: number
  /** Its requests of the last five minutes, by every relay. */
  recent: {
    /** Requests answered 2xx. */
    delivered: number
    /** Requests that failed (no answer, or any status but 2xx). */
    failed: number
    /** Median latency, ms (none without requests). */
    p50?: number
    /** 99th percentile latency, ms. */
    p99?: number
  }
}

/** The 0-based position of the `p` quantile (nearest rank) among `n` values sorted ascending. */
export function rankOffset(p: number, n: number): number {
  return Math.max(0, Math.ceil(p * n) - 1)
}

/** What one store read of a URL, put together as the view shows it (one shape for both stores). */
export function toEndpointView(input: {
  url: string
  routes: readonly DeliveryRoute[]
  circuit: Circuit | undefined
  pending: number
  oldestPendingAt?: number | undefined
  delivered: number
  failed: number
  p50: number | undefined
  p99: number | undefined
  lastFailure: EndpointFailure | undefined
}): EndpointView {
  const { url, circuit } = input
  const state = circuit?.state ?? 'closed'
  const lastFailure =
    input.lastFailure ??
    (circuit?.lastError === undefined ? undefined : { at: circuit.openedAt ?? 0, error: circuit.lastError })
  return {
    id: endpointId(url),
    url: redactUrl(url),
    sources: [...new Set(input.routes.map((r) => r.source))],
    state,
    failures: circuit?.failures ?? 0,
    ...(state !== 'paused' && circuit?.openedAt !== undefined ? { openedAt: circuit.openedAt } : {}),
    ...(circuit?.pausedAt === undefined ? {} : { pausedAt: circuit.pausedAt }),
    ...(state === 'open' && circuit?.nextProbeAt !== undefined ? { nextProbeAt: circuit.nextProbeAt } : {}),
    ...(lastFailure === undefined ? {} : { lastFailure }),
    pending: input.pending,
    ...(input.oldestPendingAt === undefined ? {} : { oldestPendingAt: input.oldestPendingAt }),
    recent: {
      delivered: input.delivered,
      failed: input.failed,
      ...(input.p50 === undefined ? {} : { p50: input.p50 }),
      ...(input.p99 === undefined ? {} : { p99: input.p99 }),
    },
  }
}
