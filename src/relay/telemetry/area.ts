import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Area } from '../area'
import type { RoutedSource } from '../config/sources'
import type { AdminToken } from '../http/auth'
import type { AuthLimiter } from '../http/auth-limiter'
import type { RelayEvents } from '../events/channel'
import type { RelayEvent } from '../events/kinds'
import type { Store } from '../store/store'
import { ClockOffset } from './clock-offset'
import { StoreHealth } from './health'
import { type RelayFigures, RelayMetrics } from './metrics'
import { opsRoutes } from './routes'
import { probeWrite, watchWrites } from './watched-store'
import type { CircuitSnapshot } from '../store/circuit-snapshot'
import type { ResolvedRelayOptions } from '../config/options'
import type { IngestTap } from '../events/tap'
import { log } from '../log'
import { AlertSender } from './alerts/alert-sender'
import { LiveStream } from './stream/live-stream'
import { publishAttempt, publishRequestRefused, streamIngestTap } from './stream/publishers'
import { streamRoutes } from './stream/routes'
import { publishViolations } from './stream/violation-events'

/** What telemetry needs from the relay. */
export interface TelemetryDeps {
  /** The outbox as opened: telemetry hands the others a copy whose writes tell /healthz. */
  store: Store
  sources: readonly RoutedSource[]
  /** What ingest and delivery tell: the metrics count it. */
  events: RelayEvents
  /** The circuit breaker's view of each webhook URL, read at each scrape. */
  circuits: () => readonly CircuitSnapshot[]
  /** The tokens that may read `/metrics`: the metrics token and the admin token, as configured. */
  scrapeTokens: readonly (string | undefined)[]
  adminToken: AdminToken
  /** Counts failed scrape tokens per client address. */
  authLimiter: AuthLimiter
  /**
   * Where `/metrics` and the operator page read the relay's figures, given this process's own:
   * under `--workers`, all the workers' together (the primary gathers them). Its own when absent.
   */
  figures?: ((own: RelayMetrics) => RelayFigures) | undefined
  /**
   * `streamReaders`; `alerts` (where alerts go, if anywhere); the sources' Webhooks settings (how
   * messages are formatted and signed for `forward` readers).
   */
  resolved: Pick<ResolvedRelayOptions, 'streamReaders' | 'alerts' | 'sources'>
}

/** Telemetry's area: its routes and stop, and what the other areas report to. */
export interface Telemetry extends Area {
  /** The store, every write's outcome told to {@link health}: what every other area writes through. */
  readonly store: Store
  readonly health: StoreHealth
  readonly metrics: RelayMetrics
  /** What `/metrics` and the operator page show: {@link metrics}, or under `--workers` every worker's. */
  readonly figures: RelayFigures
  /** The live stream (`GET /v1/stream`). */
  readonly live: LiveStream
  /** Ingest's tap into the live stream: each message as ingest judges it. */
  readonly ingestTap: IngestTap
  /** `listener`, each ingest request timed from arrival to answer. */
  timeRequests(listener: (req: IncomingMessage, res: ServerResponse) => void): typeof listener
  start(): void
}

/**
 * Telemetry, the area of whoever watches the relay: `/healthz` (whether the store takes writes)
 * and `/metrics` (Prometheus), and on PostgreSQL the offset of this relay's clock to the database's.
 */
export function createTelemetry(deps: TelemetryDeps): Telemetry {
  const opened = deps.store
  // A probe runs only after a write failed.
  const health = new StoreHealth({ probe: (bytes) => probeWrite(opened, bytes) })
  // Everything below writes through this: every write's outcome tells /healthz.
  const store = watchWrites(opened, health)
  const metrics = new RelayMetrics({ store, sources: deps.sources, health, circuits: deps.circuits })
  // On PostgreSQL, this relay's clock's offset to the database's, which judges leases and due times.
  const clock = store.kind === 'postgres' ? new ClockOffset({ store: opened }) : undefined
  if (clock !== undefined) metrics.clockOffset(() => clock.seconds)
  const figures = deps.figures?.(metrics) ?? metrics
  const live = new LiveStream({ maxReaders: deps.resolved.streamReaders })
  const alerts = deps.resolved.alerts === undefined ? undefined : new AlertSender(deps.resolved.alerts)
  const unsubscribe = deps.events.subscribe((event) => {
    count(metrics, event)
    tell(live, alerts, event)
  })
  const routes = [
    ...opsRoutes({
      health,
      metrics: figures,
      authLimiter: deps.authLimiter,
      adminToken: deps.adminToken,
      scrapeTokens: deps.scrapeTokens,
    }),
    ...streamRoutes({
      live,
      adminToken: deps.adminToken,
      authLimiter: deps.authLimiter,
      sourceNames: () => deps.sources.map((source) => source.name),
    }),
  ]
  return {
    store,
    health,
    metrics,
    figures,
    live,
    ingestTap: streamIngestTap(
      live,
      (name) => deps.resolved.sources.find((source) => source.name === name)?.destinations?.Webhooks,
    ),
    routes,
    timeRequests: (listener) => metrics.console.timeIngest(listener),
    start: () => clock?.start(),
    stop: () => {
      unsubscribe()
      live.close()
      alerts?.stop()
      clock?.stop()
      health.stop()
    },
  }
}

// What each event adds to the metrics.
function count(metrics: RelayMetrics, event: RelayEvent): void {
  if (event.type === 'ingested') metrics.ingested(event.source, event.outcome)
  else if (event.type === 'filtered') metrics.filtered(event.source, event.count)
  else if (event.type === 'refused') metrics.requestRefused(event.error)
  else if (event.type === 'attempt') metrics.attemptSettled(event.attempt)
  else if (event.type === 'function') metrics.functions.called(event.source, event.outcome, event.ms)
  else if (event.type === 'violation') metrics.violations.found(event.source, event.violations)
}

// What each event adds to the live stream and the alerts: attempts (dead letters alert), and
// requests refused whole (per-message events come through ingest's tap).
function tell(live: LiveStream, alerts: AlertSender | undefined, event: RelayEvent): void {
  try {
    if (event.type === 'refused') publishRequestRefused(live, event.error)
    if (event.type === 'violation') publishViolations(live, event.violations)
    if (event.type === 'circuit' && event.change === 'opened') alerts?.endpointFailing(event.url, event.error)
    if (event.type === 'circuit' && event.change === 'closed') alerts?.endpointRecovered(event.url)
    if (event.type !== 'attempt') return
    publishAttempt(live, event.attempt)
    const { outcome, source } = event.attempt
    if (alerts !== undefined && outcome.next.status === 'failed') {
      for (const url of new Set(outcome.requests.map((request) => request.url))) {
        alerts.deadLettered(url, source, outcome.next.error)
      }
    }
  } catch (error) {
    log.error(`live stream: could not publish an event: ${(error as Error).message}`, { event: 'internal-error' })
  }
}
