import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Agent } from 'undici'
import { nextAttemptAt, RETRY_WINDOW_MS, WebhookDestination } from '../webhooks/index'
import type { Destination } from './delivery/destination'
import { guardedAgent } from './delivery/ssrf'
import { Worker } from './delivery/worker'
import { routesByUrl } from './delivery/worker-options'
import { describeStore } from './config/database-value'
import { logStartupWarnings } from './config/startup-warnings'
import { RelayConfigError } from './errors'
import { AdminToken, WriteKeys } from './http/auth'
import { AuthLimiter } from './http/auth-limiter'
import { createRouter } from './http/router'
import { GroupCommit } from './ingest/group-commit'
import { log, plural, redactFromLog, useLogLevel } from './log'
import { StoreHealth } from './ops/health'
import { ClockOffset } from './ops/clock-offset'
import { type RelayFigures, RelayMetrics } from './ops/metrics'
import { pageRoutes } from './ops/page/page-routes'
import { opsRoutes } from './ops/routes'
import { secretsOf } from './ops/secrets'
import { probeWrite, watchWrites } from './ops/watched-store'
import { type RelayOptions, type ResolvedRelayOptions, resolveRelayOptions } from './options'
import { type RoutedSource, WEBHOOKS_DESTINATION } from './sources'
import { openStore } from './store/open-store'
import { RetentionSweeper } from './store/retention'
import type { Store } from './store/store'

/** A running relay. */
export interface Relay {
  /** The base URL it listens on, such as `http://127.0.0.1:8787`. */
  readonly url: string
  /**
   * Stops the relay: no new requests are accepted, deliveries in flight get a moment to finish
   * (those that do not are attempted again at the next start), then the database is closed.
   * Idempotent.
   */
  close(): Promise<void>
}

// How long close() waits for deliveries in flight before leaving them to the next start.
const CLOSE_GRACE_MS = 2000

// On a database shared by several relays, work appears that this relay is not told of: messages
// another relay took in, retries it scheduled, leases of a relay that died. Each relay looks for
// it this often (one cheap claim per source when there is none).
const SHARED_STORE_POLL_MS = 1000

/**
 * Starts a relay: opens (or creates) the outbox database, builds each source's destinations,
 * resumes pending deliveries and listens for HTTP.
 *
 * @throws {RelayConfigError} (`ERR_RELAY_CONFIG`) for invalid options, naming the field — also
 * for destination settings the destination refuses.
 * @throws {RelayError} (`ERR_RELAY_DATABASE`) when the database cannot be opened.
 */
export async function createRelay(options: RelayOptions): Promise<Relay> {
  return startRelay(options, { sharedByProcesses: false, warningsLogged: false })
}

/**
 * How this relay's process stands to its store and its fellows (internal, not exported to users).
 * `sharedByProcesses`: it is one of the workers of `tracklet relay --workers N`, on a store the
 * others use at once. `warningsLogged`: its start-up warnings were logged already (by the primary
 * of those workers, once for all), so it logs none.
 */
export interface RelayProcess {
  sharedByProcesses: boolean
  warningsLogged: boolean
  /**
   * Where `/metrics` and the operator page read the relay's figures, given this process's own:
   * under `--workers`, all the workers' together (the primary gathers them). Its own when absent.
   */
  figures?: (own: RelayMetrics) => RelayFigures
  /** Where the relay listens is said by the primary of `--workers`, once for all: not logged here. */
  listeningAnnounced?: boolean
}

/** {@link createRelay}, for a relay that may be one of several processes on its store. */
export async function startRelay(options: RelayOptions, process: RelayProcess): Promise<Relay> {
  const resolved = resolveRelayOptions(options)
  // `workers` forks processes, which only the command can do: a value here must not be ignored.
  if (resolved.workers > 1 && !process.sharedByProcesses) {
    throw new RelayConfigError(
      'workers',
      `is an option of the \`tracklet relay\` command, which forks that many processes; createRelay runs one relay in this process (start one per process instead), got ${resolved.workers}`,
    )
  }
  const forgetSecrets = redactFromLog(secretsOf(resolved))
  const releaseLogLevel = useLogLevel(resolved.logLevel)
  if (!process.warningsLogged) void logStartupWarnings(resolved)
  const agent = guardedAgent({ allowPrivateNetworks: resolved.allowPrivateNetworks })
  let opened: Store | undefined
  // A probe runs only after a write failed, so only once the store is open.
  const health = new StoreHealth({ probe: (bytes) => probeWrite(opened!, bytes) })
  try {
    const destinations = buildDestinations(resolved, agent)
    opened = await openStore(resolved.database, {
      storeTimeout: resolved.storeTimeout,
      sharedByProcesses: process.sharedByProcesses,
    })
    // Everything below writes through this: every write's outcome tells /healthz.
    const store = watchWrites(opened, health)
    // Deliveries that were in flight when the relay last stopped are still pending: due once
    // their leases are void (at once on SQLite; after leaseTimeout on a shared PostgreSQL).
    const orphaned = await store.failUnconfiguredSources(resolved.sources.map((s) => s.name))
    if (orphaned > 0) {
      log.warn(
        `dead-lettered ${plural(orphaned, 'pending delivery', 'pending deliveries')} of sources no longer configured`,
        {
          event: 'dead-lettered',
          reason: 'source-unconfigured',
          count: orphaned,
        },
      )
    }

    const sources: RoutedSource[] = resolved.sources.map((s) => ({
      name: s.name,
      destinations: Object.keys(s.destinations ?? {}),
      blockedEvents: new Set(s.schema?.blockedEvents),
    }))
    // The worker is built below; the metrics read its circuits only at scrape time.
    let worker: Worker | undefined
    const metrics = new RelayMetrics({ store, sources, health, circuits: () => worker?.circuits() ?? [] })
    // On PostgreSQL, this relay's clock's offset to the database's, which judges leases and due times.
    const clock = store.kind === 'postgres' ? new ClockOffset({ store: opened }) : undefined
    if (clock !== undefined) metrics.clockOffset(() => clock.seconds)
    const figures = process.figures?.(metrics) ?? metrics
    worker = new Worker({
      store,
      destinations,
      // The platform's schedule and the window it keeps to, together.
      retries: { schedule: nextAttemptAt, window: RETRY_WINDOW_MS },
      concurrency: resolved.concurrency,
      leaseTimeout: resolved.leaseTimeout,
      observe: (attempt) => metrics.attemptSettled(attempt),
      breaker: {
        ...resolved.breaker,
        maxInFlightPerUrl: resolved.maxInFlightPerUrl,
        // The unwatched store: circuit writes are the breaker's, not a sign of the outbox's health.
        circuits: opened.circuits,
      },
    })
    const commits = new GroupCommit(store)
    const retention = new RetentionSweeper(store, resolved.retention)
    const adminToken = new AdminToken(resolved.adminToken)
    const authLimiter = new AuthLimiter({ trustProxy: resolved.trustProxy })
    const wake = () => worker.wake()
    // Each webhook URL with the routes that send there: the admin API's and the page's endpoints.
    const webhooks = routesByUrl(destinations)
    const circuitChanged = (url: string) => worker.refreshCircuits([url])
    const router = createRouter({
      store,
      sources,
      wake,
      webhooks,
      circuitChanged,
      writeKeys: new WriteKeys(resolved.sources.map((s, index) => [s.writeKey, sources[index]!] as const)),
      adminToken,
      authLimiter,
      commits,
      routes: [
        ...opsRoutes({
          health,
          metrics: figures,
          authLimiter,
          adminToken,
          scrapeTokens: [resolved.metricsToken, resolved.adminToken],
        }),
        ...pageRoutes({
          store,
          sources,
          wake,
          webhooks,
          circuitChanged,
          adminToken,
          authLimiter,
          health,
          metrics: figures,
        }),
      ],
      observeIngest: {
        answered: (source, outcome) => {
          metrics.ingested(source, outcome)
          if (outcome.filtered > 0) metrics.filtered(source, outcome.filtered)
        },
        refused: (error) => metrics.requestRefused(error),
      },
    })
    const server = createServer(
      {
        headersTimeout: resolved.headersTimeout,
        requestTimeout: resolved.requestTimeout,
        maxHeaderSize: resolved.maxHeaderSize,
        // Node checks the two timeouts above only this often (30 s by default).
        connectionsCheckingInterval: Math.max(
          50,
          Math.min(30_000, Math.floor(Math.min(resolved.headersTimeout, resolved.requestTimeout) / 4)),
        ),
      },
      // Ingest requests are timed from arrival to answer (tracklet_ingest_request_duration_seconds).
      metrics.console.timeIngest(router),
    )
    const url = await listen(server, resolved)
    // Which store and where (never a password): an ambient DATABASE_URL must not go unnoticed.
    if (!process.listeningAnnounced) {
      log.info(`listening on ${url} with ${plural(sources.length, 'source')} (${describeStore(resolved.database)})`, {
        event: 'listening',
        url,
      })
    }
    worker.wake()
    retention.start()
    clock?.start()
    // A SQLite file shared by `--workers` processes is shared like a PostgreSQL database.
    const shared = store.kind === 'postgres' || process.sharedByProcesses
    const poll = shared ? setInterval(() => worker.wake(), SHARED_STORE_POLL_MS).unref() : undefined
    return {
      url,
      close: once(async () => {
        clearInterval(poll)
        clock?.stop()
        await shutdown(server, worker, commits, retention, agent, health, store)
        authLimiter.stop()
        forgetSecrets()
        releaseLogLevel()
      }),
    }
  } catch (error) {
    health.stop()
    await opened?.close()
    await agent.close()
    forgetSecrets()
    releaseLogLevel()
    throw error
  }
}

// One Webhooks destination per source, built once; its settings errors are configuration errors.
function buildDestinations(options: ResolvedRelayOptions, agent: Agent): Map<string, Map<string, Destination>> {
  const bySource = new Map<string, Map<string, Destination>>()
  options.sources.forEach((source, index) => {
    const destinations = new Map<string, Destination>()
    const settings = source.destinations?.Webhooks
    if (settings !== undefined) {
      try {
        destinations.set(
          WEBHOOKS_DESTINATION,
          new WebhookDestination(settings, {
            timeout: options.webhookTimeout,
            dispatcher: agent,
            responseBodyLimit: options.responseBodyLimit,
          }),
        )
      } catch (error) {
        throw new RelayConfigError(`sources[${index}].destinations.Webhooks`, (error as Error).message, {
          cause: error,
        })
      }
    }
    bySource.set(source.name, destinations)
  })
  return bySource
}

function listen(server: Server, options: ResolvedRelayOptions): Promise<string> {
  return new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(options.port, options.host, () => {
      server.off('error', reject)
      const { address, port } = server.address() as AddressInfo
      resolve(`http://${address.includes(':') ? `[${address}]` : address}:${port}`)
    })
  })
}

async function shutdown(
  server: Server,
  worker: Worker,
  commits: GroupCommit,
  retention: RetentionSweeper,
  agent: Agent,
  health: StoreHealth,
  store: Store,
): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()))
  server.closeIdleConnections()
  await worker.stop(CLOSE_GRACE_MS)
  // Requests still being answered get the same grace; then their connections are cut.
  server.closeAllConnections()
  await closed
  await agent.destroy()
  // A group still waiting is committed (its requests' connections are gone, but the client may
  // not have sent them anywhere else; at-least-once).
  await commits.flush()
  await retention.stop()
  health.stop()
  await store.close()
  log.info('closed', { event: 'closed' })
}

function once(fn: () => Promise<void>): () => Promise<void> {
  let promise: Promise<void> | undefined
  return () => (promise ??= fn())
}
