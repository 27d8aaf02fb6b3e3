import { describeStore } from './config/database-value'
import type { RelayOptions } from './config/options'
import { secretsOf } from './config/secrets'
import { SourceRegistry } from './config/source-registry'
import { logStartupWarnings } from './config/startup-warnings'
import { refuseWorkersOutsideCommand, validateRelayOptions } from './config/validate'
import { createConsole } from './console/area'
import { createDelivery, type Delivery } from './delivery/area'
import { RelayEvents } from './events/channel'
import { AdminToken } from './http/auth'
import { AuthLimiter } from './http/auth-limiter'
import { createRouter } from './http/router'
import { listen } from './http/server'
import { createIngest } from './ingest/area'
import { log, plural, redactFromLog, useLogLevel } from './log'
import { runSteps, type Step } from './steps'
import { openNotifications } from './store/notifications/open'
import { openStore } from './store/open-store'
import { createTelemetry, type TelemetryDeps } from './telemetry/area'

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
 * of those workers, once for all), so it logs none. Under `--workers` too: `figures`, where /metrics
 * and the page read the relay's figures (every worker's); `listeningAnnounced`, the primary says where.
 */
export interface RelayProcess {
  sharedByProcesses: boolean
  warningsLogged: boolean
  figures?: TelemetryDeps['figures']
  listeningAnnounced?: boolean
}

/**
 * {@link createRelay}, for a relay that may be one of several processes on its store. It only
 * composes the areas (docs/architecture.md): telemetry, delivery, ingest and the console, on the
 * store, in that order; each step that started is undone, in reverse, if a later one fails.
 */
export async function startRelay(options: RelayOptions, process: RelayProcess): Promise<Relay> {
  const resolved = validateRelayOptions(options)
  refuseWorkersOutsideCommand(resolved, process.sharedByProcesses)
  // What close() and a failed start end with; each started step is undone, in reverse, before them.
  const last: Step[] = [
    ['forget the secrets', redactFromLog(secretsOf(resolved))],
    ['release the log level', useLogLevel(resolved.logLevel)],
  ]
  const undo: Step[] = [...last]
  if (!process.warningsLogged) void logStartupWarnings(resolved)
  try {
    const opened = await openStore(resolved.database, {
      storeTimeout: resolved.storeTimeout,
      sharedByProcesses: process.sharedByProcesses,
    })
    undo.unshift(['close the store', () => opened.close()])
    const registry = new SourceRegistry(resolved.sources)
    const sources = registry.routed()
    const events = new RelayEvents()
    // The one database notification channel, which configuration changes and the live view will share.
    const notifications = openNotifications(resolved.database)
    undo.unshift(['close the notification channel', () => notifications.close()])
    // The admin token, and the limiter every credential check of every area goes through.
    const auth = {
      adminToken: new AdminToken(resolved.adminToken),
      authLimiter: new AuthLimiter({ trustProxy: resolved.trustProxy }),
    }
    undo.unshift(['stop the credentials limiter', () => auth.authLimiter.stop()])
    // Delivery is built below; the metrics read its circuits only at scrape time.
    let delivery: Delivery | undefined
    const scrapeTokens = [resolved.metricsToken, resolved.adminToken]
    const circuits = () => delivery?.circuits() ?? []
    const seen = { store: opened, sources, events, circuits, scrapeTokens, figures: process.figures, resolved }
    const telemetry = createTelemetry({ ...seen, ...auth })
    undo.unshift(['stop telemetry', () => telemetry.stop()])
    const { store, health } = telemetry
    // A SQLite file shared by `--workers` processes is shared like a PostgreSQL database.
    const shared = store.kind === 'postgres' || process.sharedByProcesses
    const started = await createDelivery({ options: resolved, store, circuits: opened.circuits, shared, events })
    delivery = started
    undo.unshift(['stop delivery', () => started.stop()])
    const wake = () => started.wake()
    const { ingestTap: tap } = telemetry
    const ingest = createIngest({ store, sources: registry, authLimiter: auth.authLimiter, wake, events, tap })
    const { webhooks, functions } = started
    const circuitChanged = (url: string) => started.circuitChanged(url)
    const operated = { health, metrics: telemetry.figures, functions }
    const operator = createConsole({ store, sources, wake, webhooks, circuitChanged, ...operated, ...auth })
    const router = createRouter([...ingest.routes, ...operator.routes, ...telemetry.routes])
    const server = await listen(telemetry.timeRequests(router), resolved)
    const { url } = server
    // Which store and where (never a password): an ambient DATABASE_URL must not go unnoticed.
    const where = `${plural(sources.length, 'source')} (${describeStore(resolved.database)})`
    if (!process.listeningAnnounced) log.info(`listening on ${url} with ${where}`, { event: 'listening', url })
    started.start()
    telemetry.start()
    const close = once(() =>
      runSteps([
        ['stop taking connections', () => server.stopListening()],
        ['let deliveries in flight finish', () => started.drain(CLOSE_GRACE_MS)],
        // Requests still being answered got the same grace; then their connections are cut.
        ['cut the connections left', () => server.cutConnections()],
        ['stop delivery', () => started.stop()],
        ['commit ingest still waiting', () => ingest.stop()],
        ['stop the console', () => operator.stop()],
        ['stop telemetry', () => telemetry.stop()],
        ['close the notification channel', () => notifications.close()],
        ['close the store', () => store.close()],
        ['log closed', () => log.info('closed', { event: 'closed' })],
        ['stop the credentials limiter', () => auth.authLimiter.stop()],
        ...last,
      ]),
    )
    return { url, close }
  } catch (error) {
    await runSteps(undo)
    throw error
  }
}

function once(fn: () => Promise<void>): () => Promise<void> {
  let promise: Promise<void> | undefined
  return () => (promise ??= fn())
}
