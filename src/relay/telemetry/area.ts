import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Area } from '../area'
import type { RoutedSource } from '../config/sources'
import type { AdminToken } from '../http/auth'
import type { AuthLimiter } from '../http/auth-limiter'
import type { Store } from '../store/store'
import { log } from '../log'
import { ClockOffset } from './clock-offset'
import { StoreHealth } from './health'
import { RelayMetrics } from './metrics'
import { opsRoutes } from './routes'
import { probeWrite, watchWrites } from './watched-store'
import type { CircuitSnapshot } from '../delivery/breaker'
import type { SettledAttempt } from '../delivery/worker-options'
import type { IngestTap } from '../ingest/tap'
import type { WebhookSettings } from '../../webhooks/index'
import { LiveStream } from './stream/live-stream'
import { publishAttempt, publishRequestRefused, streamIngestTap } from './stream/publishers'
import { streamRoutes } from './stream/routes'
import type { AlertsOptions } from '../config/alerts-option'
import type { CircuitChanges } from '../delivery/circuit-changes'
import { AlertSender } from './alerts/alert-sender'

/** What telemetry needs from the relay. */
export interface TelemetryDeps {
  /** The outbox as opened: telemetry hands the others a copy whose writes tell /healthz. */
  store: Store
  sources: readonly RoutedSource[]
  /** The circuit breaker's view of each webhook URL, read at each scrape. */
  circuits: () => readonly CircuitSnapshot[]
  /** The tokens that may read `/metrics`: the metrics token and the admin token, as configured. */
  scrapeTokens: readonly (string | undefined)[]
  adminToken: AdminToken
  /** Counts failed scrape tokens per client address. */
  authLimiter: AuthLimiter
  /** Readers of the live stream at once (`streamReaders`). */
  streamReaders: number
  /** A source's Webhooks settings: how its messages are formatted and signed for `forward` readers. */
  webhooksOf: (source: string) => WebhookSettings | undefined
  /** Where alerts go (`alerts`), if anywhere. */
  alerts: AlertsOptions | undefined
}

/** Telemetry's area: its routes and stop, and what the other areas report to. */
export interface Telemetry extends Area {
  /** The store, every write's outcome told to {@link health}: what every other area writes through. */
  readonly store: Store
  readonly health: StoreHealth
  readonly metrics: RelayMetrics
  /** The live stream (`GET /v1/stream`). */
  readonly live: LiveStream
  /** Ingest's tap into the live stream. */
  readonly ingestTap: IngestTap
  /** An attempt settled: counted, and on the live stream. Never throws. */
  attemptSettled(attempt: SettledAttempt): void
  /** The circuit changes this relay makes: alerts. */
  readonly circuitChanges: CircuitChanges
  /** An ingest request was refused whole: counted, and on the live stream. */
  requestRefused(error: unknown): void
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
  const live = new LiveStream({ maxReaders: deps.streamReaders })
  const alerts = deps.alerts === undefined ? undefined : new AlertSender(deps.alerts)
  const routes = [
    ...opsRoutes({
      health,
      metrics,
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
    live,
    ingestTap: streamIngestTap(live, deps.webhooksOf),
    attemptSettled: (attempt) => {
      metrics.attemptSettled(attempt)
      try {
        publishAttempt(live, attempt)
        if (alerts !== undefined && attempt.outcome.next.status === 'failed') {
          const { error } = attempt.outcome.next
          for (const url of new Set(attempt.outcome.requests.map((request) => request.url))) {
            alerts.deadLettered(url, attempt.source, error)
          }
        }
      } catch (error) {
        log.error(`live stream: could not publish or alert an attempt: ${(error as Error).message}`, {
          event: 'internal-error',
        })
      }
    },
    circuitChanges: {
      opened: (url, error) => alerts?.endpointFailing(url, error),
      closed: (url) => alerts?.endpointRecovered(url),
    },
    requestRefused: (error) => {
      metrics.requestRefused(error)
      publishRequestRefused(live, error)
    },
    routes,
    timeRequests: (listener) => metrics.console.timeIngest(listener),
    start: () => clock?.start(),
    stop: () => {
      live.close()
      alerts?.stop()
      clock?.stop()
      health.stop()
    },
  }
}
