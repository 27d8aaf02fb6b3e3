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
import { type RelayFigures, RelayMetrics } from './metrics'
import { opsRoutes } from './routes'
import { probeWrite, watchWrites } from './watched-store'
import type { CircuitSnapshot } from '../store/circuit-snapshot'
import type { ResolvedRelayOptions } from '../config/options'
import type { AlertsOptions } from '../config/alerts-option'
import type { IngestTap } from '../events/tap'
import type { DeliverableMessage } from '../../shared/message'
import { log } from '../log'
import { AlertSender } from '../features/live/alerts/alert-sender'
import type { Notifications } from '../store/notifications/channel'
import { StreamFanIn } from '../features/live/stream/fan-in'
import { LiveStream } from '../features/live/stream/live-stream'
import { MinuteHistory } from './minute-history'
import type { LastHour, RecentRates } from '../events/readings'
import { publishAttempt, publishRequestRefused, streamIngestTap } from '../features/live/stream/publishers'
import { streamRoutes } from '../features/live/stream/routes'
import { publishViolations } from '../features/live/stream/violation-events'

/** What telemetry needs from the relay. */
export interface TelemetryDeps {
  /** The outbox as opened: telemetry hands the others a copy whose writes tell /healthz. */
  store: Store
  sources: readonly RoutedSource[]
  /**
   * The sources' settings now, the file's and the admin API's: how a message is formatted and
   * signed for `forward` readers. Without it, the options' sources.
   */
  registry?: (Pick<SourceRegistry, 'all' | 'onChange'> & Partial<Pick<SourceRegistry, 'unreadable'>>) | undefined
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
  figures?: ((own: RelayMetrics, history: MinuteHistory) => RelayFigures) | undefined
  /**
   * `streamReaders`; `alerts` (where alerts go, if anywhere); the sources' Webhooks settings (how
   * messages are formatted and signed for `forward` readers).
   */
  resolved: Pick<ResolvedRelayOptions, 'streamReaders' | 'alerts' | 'sources'>
  /** The relay's notification channel: on PostgreSQL, every relay's events reach every relay's stream. */
  notifications?: Notifications | undefined
}

/** What the live stream takes from the areas made after telemetry. */
export interface LaterDeps {
  /** Whether a request carries a signed-in operator page's session (the live view reads the stream so). */
  hasSession: (req: IncomingMessage) => Promise<boolean>
  /** A message as its source's Webhooks destination would format it, after its function (`forward` readers). */
  beforeFormatting: (source: string, message: DeliverableMessage) => Promise<DeliverableMessage | undefined>
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
  /** What the operator page shows of the figures: the recent rates, and the last hour for its charts. */
  readonly readings: {
    recentRates(): RecentRates | Promise<RecentRates>
    lastHour(): LastHour | Promise<LastHour>
  }
  /** Connects what the areas made after telemetry give the live stream. */
  connect(later: LaterDeps): void
  /** `listener`, each ingest request timed from arrival to answer. */
  timeRequests(listener: (req: IncomingMessage, res: ServerResponse) => void): typeof listener
  start(): void
  /** Sends the alerts from now on as `options` says (a config reload); none when undefined. */
  useAlerts(options: AlertsOptions | undefined): void
}

/**
 * Telemetry, the area of whoever watches the relay: `/healthz` (whether the store takes writes)
 * and `/metrics` (Prometheus), and on PostgreSQL the offset of this relay's clock to the database's.
 */
export function createTelemetry(deps: TelemetryDeps): Telemetry {
  const opened = deps.store
  // A probe runs only after a write failed.
  const health = new StoreHealth({
    probe: (bytes) => probeWrite(opened, bytes),
    unreadableSources: () => deps.registry?.unreadable?.() ?? [],
  })
  // Everything below writes through this: every write's outcome tells /healthz.
  const store = watchWrites(opened, health)
  const metrics = new RelayMetrics({ store, sources: deps.sources, health, circuits: deps.circuits })
  // On PostgreSQL, this relay's clock's offset to the database's, which judges leases and due times.
  const clock = store.kind === 'postgres' ? new ClockOffset({ store: opened }) : undefined
  if (clock !== undefined) metrics.clockOffset(() => clock.seconds)
  const history = new MinuteHistory()
  const figures: RelayFigures = deps.figures?.(metrics, history) ?? metrics
  // A source added while the relay runs gets its series at 0 as the configured ones did.
  const unwatchSources = deps.registry?.onChange(() => metrics.sourcesChanged(deps.sources))
  const live = new LiveStream({ maxReaders: deps.resolved.streamReaders })
  // SQLite's relays share no server (and `--workers` share one HTTP port): only PostgreSQL fans in.
  const fanIn =
    store.kind === 'postgres' && deps.notifications !== undefined
      ? new StreamFanIn(live, deps.notifications)
      : undefined
  const senderOf = (options: AlertsOptions | undefined) =>
    options === undefined ? undefined : new AlertSender(options, { claims: store.alertClaims })
  let alerts = senderOf(deps.resolved.alerts)
  let later: LaterDeps | undefined
  const unsubscribe = deps.events.subscribe((event) => {
    count(metrics, event)
    history.count(event)
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
      hasSession: (req) => later?.hasSession(req) ?? Promise.resolve(false),
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
      (name) =>
        (deps.registry?.all().map((s) => s.settings) ?? deps.resolved.sources).find((source) => source.name === name)
          ?.destinations?.Webhooks,
      (source, message) => later?.beforeFormatting(source, message) ?? Promise.resolve(message),
    ),
    readings: {
      recentRates: () => figures.recentRates(),
      lastHour: () => figures.lastHour?.() ?? history.lastHour(),
    },
    connect: (given) => {
      later = given
    },
    routes,
    timeRequests: (listener) => metrics.console.timeIngest(listener),
    start: () => {
      clock?.start()
      fanIn?.start().catch((error: unknown) => {
        log.warn(`live stream: other relays' events will not reach this relay: ${(error as Error).message}`, {
          event: 'stream-fan-in-failed',
        })
      })
    },
    useAlerts: (options) => {
      // What the old sender still held is dropped: it was bound for an address the operator replaced.
      alerts?.stop()
      alerts = senderOf(options)
    },
    stop: async () => {
      await fanIn?.stop().catch(() => undefined)
      unsubscribe()
      unwatchSources?.()
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
    if (event.type === 'circuit') alerts?.circuitChanged(event)
    if (event.type !== 'attempt') return
    publishAttempt(live, event.attempt)
    alerts?.attemptSettled(event.attempt)
  } catch (error) {
    log.error(`live stream: could not publish an event: ${(error as Error).message}`, { event: 'internal-error' })
  }
}
