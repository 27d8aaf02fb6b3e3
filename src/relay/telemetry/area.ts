import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Area } from '../area'
import type { SourceRegistry } from '../sources/source-registry'
import type { RoutedSource } from '../config/sources'
import type { AdminToken } from '../http/auth'
import type { AuthLimiter } from '../http/auth-limiter'
import type { RelayEvents } from '../events/channel'
import type { RelayEvent } from '../events/kinds'
import type { Store } from '../store/store'
import { ClockOffset } from './clock-offset'
import { StoreHealth } from './health'
import { judgeWrites, probeWrite } from './health-probe'
import { type RelayFigures, RelayMetrics } from './metrics'
import { opsRoutes } from './routes'
import type { CircuitSnapshot } from '../store/circuit-snapshot'
import { MinuteHistory } from './minute-history'
import type { LastHour, RecentRates } from '../events/readings'

/** What telemetry needs from the relay. */
export interface TelemetryDeps {
  /**
   * The outbox: read for the metrics, and written by the health probe (a probe's own outcome is
   * the probe's answer, not a `write` event).
   */
  store: Store
  sources: readonly RoutedSource[]
  /** The sources changing while the relay runs: each new source's series start at 0. */
  registry?: (Pick<SourceRegistry, 'onChange'> & Partial<Pick<SourceRegistry, 'unreadable'>>) | undefined
  /**
   * What ingest, delivery and the store tell (docs/architecture.md, "Events"): the metrics count
   * it; `/healthz` judges the store by its `write` events.
   */
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
  figures?: ((own: RelayMetrics, history: MinuteHistory) => RelayFigures) | undefined
}

/** Telemetry's area: its routes and stop, and what the operator page reads of it. */
export interface Telemetry extends Area {
  /** Whether the store takes writes, judged from the store's `write` events (`/healthz`). */
  readonly health: StoreHealth
  readonly metrics: RelayMetrics
  /** What `/metrics` and the operator page show: {@link metrics}, or under `--workers` every worker's. */
  readonly figures: RelayFigures
  /** What the operator page shows of the figures: the recent rates, and the last hour for its charts. */
  readonly readings: {
    recentRates(): RecentRates | Promise<RecentRates>
    lastHour(): LastHour | Promise<LastHour>
  }
  /** `listener`, each ingest request timed from arrival to answer. */
  timeRequests(listener: (req: IncomingMessage, res: ServerResponse) => void): typeof listener
  start(): void
}

/**
 * Telemetry, the area of whoever watches the relay: `/healthz` (whether the store takes writes)
 * and `/metrics` (Prometheus), and on PostgreSQL the offset of this relay's clock to the database's.
 */
export function createTelemetry(deps: TelemetryDeps): Telemetry {
  const { store } = deps
  // A probe runs only after a write failed.
  const health = new StoreHealth({
    probe: (bytes) => probeWrite(store, bytes),
    unreadableSources: () => deps.registry?.unreadable?.() ?? [],
  })
  const metrics = new RelayMetrics({ store, sources: deps.sources, health, circuits: deps.circuits })
  // On PostgreSQL, this relay's clock's offset to the database's, which judges leases and due times.
  const clock = store.kind === 'postgres' ? new ClockOffset({ store }) : undefined
  if (clock !== undefined) metrics.clockOffset(() => clock.seconds)
  const history = new MinuteHistory()
  const figures: RelayFigures = deps.figures?.(metrics, history) ?? metrics
  // A source added while the relay runs gets its series at 0 as the configured ones did.
  const unwatchSources = deps.registry?.onChange(() => metrics.sourcesChanged(deps.sources))
  const judge = judgeWrites(health)
  const unsubscribe = deps.events.subscribe((event) => {
    judge(event)
    count(metrics, event)
    history.count(event)
  })
  const routes = opsRoutes({
    health,
    metrics: figures,
    authLimiter: deps.authLimiter,
    adminToken: deps.adminToken,
    scrapeTokens: deps.scrapeTokens,
  })
  return {
    health,
    metrics,
    figures,
    readings: {
      recentRates: () => figures.recentRates(),
      lastHour: () => figures.lastHour?.() ?? history.lastHour(),
    },
    routes,
    timeRequests: (listener) => metrics.console.timeIngest(listener),
    start: () => clock?.start(),
    stop: () => {
      unsubscribe()
      unwatchSources?.()
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
  // A replay's copy is counted apart: live delivery's figures and alerts are live traffic's.
  else if (event.type === 'attempt' && event.attempt.replayId !== undefined) metrics.replays.copySettled(event.attempt)
  else if (event.type === 'attempt') metrics.attemptSettled(event.attempt)
  else if (event.type === 'function') metrics.functions.called(event.source, event.outcome, event.ms)
  else if (event.type === 'violation') metrics.violations.found(event.source, event.violations)
}
