import { describeStore } from './config/database-value'
import { ConfigReloader, type ReloadTargets } from './sources/reload'
import { auditReload } from './sources/reload-audit'
import type { RelayOptions } from './config/options'
import { secretsOf } from './config/secrets'
import { openSources } from './sources/open-sources'
import { logStartupWarnings } from './config/startup-warnings'
import { refuseWorkersOutsideCommand, validateRelayOptions } from './config/validate'
import { createConsole } from './console/area'
import { createDelivery, type Delivery } from './delivery/area'
import { RelayEvents } from './events/channel'
import { AdminToken } from './http/auth'
import { AuthLimiter } from './http/auth-limiter'
import { createRouter } from './http/router'
import { listen } from './http/server'
import { deliveryStepOf, ingestCheckOf } from './features/compose'
import { checkFeatureOrder, type Feature } from './features/feature'
import { startFunctions } from './features/functions/index'
import { plansFeature } from './features/plans/index'
import { startPrivacy } from './features/privacy/index'
import { createIngest } from './ingest/area'
import { log, plural, redactFromLog, useLogLevel } from './log'
import { once, runSteps, type Step } from './steps'
import { openNotifications } from './store/notifications/open'
import { openStore } from './store/open-store'
import { createTelemetry, type TelemetryDeps } from './telemetry/area'
import type { Relay } from './relay-api'

export type { Relay } from './relay-api'

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
 * How this relay's process stands to its fellows (internal): a worker of `--workers N` and what
 * its primary does.
 */
export interface RelayProcess {
  /** One of the workers of `tracklet relay --workers N`, on a store the others use at once. */
  sharedByProcesses: boolean
  warningsLogged: boolean
  /** Where /metrics and the page read the relay's figures (every worker's). */
  figures?: TelemetryDeps['figures']
  listeningAnnounced?: boolean
  /** Told of each config reload applied, instead of the audit's `config.reloaded` entry (tests). */
  onReloaded?: ReloadTargets['onReloaded']
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
    const { storeTimeout, database } = resolved
    const opened = await openStore(database, {
      storeTimeout,
      sharedByProcesses: process.sharedByProcesses,
    })
    undo.unshift(['close the store', () => opened.close()])
    const events = new RelayEvents()
    // The one database notification channel, which configuration changes and the live view share.
    const notifications = openNotifications(resolved.database)
    undo.unshift(['close the notification channel', () => notifications.close()])
    const { registry, sync, box } = await openSources(resolved, opened.sourceConfigs, notifications)
    undo.unshift(['stop following the sources', () => sync.stop()])
    const sources = registry.live() // the file's and the admin API's, updated in place
    // The admin token, and the limiter every credential check of every area goes through.
    const authLimiter = new AuthLimiter({ trustProxy: resolved.trustProxy })
    const auth = {
      adminToken: new AdminToken(resolved.adminToken, resolved.readToken),
      authLimiter,
    }
    undo.unshift(['stop the credentials limiter', () => auth.authLimiter.stop()])
    // Delivery is built below; the metrics read its circuits only at scrape time.
    let delivery: Delivery | undefined
    const scrapeTokens = [resolved.metricsToken, resolved.adminToken, resolved.readToken]
    const circuits = () => delivery?.circuits() ?? []
    const seen = {
      store: opened,
      sources,
      registry,
      events,
      circuits,
      scrapeTokens,
      resolved,
      notifications,
    }
    const telemetry = createTelemetry({ ...seen, figures: process.figures, ...auth })
    undo.unshift(['stop telemetry', () => telemetry.stop()])
    const { store, health, readings: metrics, ingestTap: tap } = telemetry
    // A SQLite file shared by `--workers` processes is shared like a PostgreSQL database.
    const shared = store.kind === 'postgres' || process.sharedByProcesses
    // The destinations' functions compile before delivery starts: its step calls them.
    const functions = await startFunctions({ options: resolved, registry, events, store, ...auth })
    undo.unshift(['stop the functions feature', () => functions.stop()])
    const onStore = {
      options: resolved,
      store,
      circuits: opened.circuits,
      shared,
      events,
      sources: registry,
      step: deliveryStepOf([functions]),
    }
    const started = await createDelivery(onStore)
    delivery = started
    undo.unshift(['stop delivery', () => started.stop()])
    const wake = () => started.wake()
    // Privacy resolves once the suppressions are read: no message is taken in without them.
    const privacy = await startPrivacy({ store, notifications, registry, ...auth, wake })
    undo.unshift(['stop privacy', () => privacy.stop()])
    // The features, in order: each one folder under features/ (docs/architecture.md, "Features").
    // Privacy before plans: no violation is kept of a suppressed user's message.
    const plans = plansFeature({ violations: store.violations })
    const features: readonly Feature[] = [privacy, plans, functions]
    checkFeatureOrder(features)
    const check = ingestCheckOf(features)
    const ingestDeps = { store, sources: registry, ...auth, wake, events, tap }
    const ingest = createIngest(check === undefined ? ingestDeps : { ...ingestDeps, check })
    const circuitChanged = (url: string) => started.circuitChanged(url)
    const { webhooks } = started
    const operations = {
      store,
      sources,
      wake,
      webhooks,
      functions: functions.console,
      circuitChanged,
      health,
      metrics,
    }
    const operator = createConsole({
      ...operations,
      sourceAdmin: { registry, sync, box },
      sections: [(kit) => privacy.pageRoutes(kit)],
      ...auth,
    })
    telemetry.connect({
      hasSession: (req) => operator.hasSession(req),
      beforeFormatting: started.beforeFormatting,
    })
    const featureRoutes = features.flatMap((f) => [...(f.routes ?? []), ...(f.page?.routes ?? [])])
    const router = createRouter([
      ...ingest.routes,
      ...operator.routes,
      ...featureRoutes,
      ...telemetry.routes,
    ])
    const server = await listen(telemetry.timeRequests(router), resolved)
    const url = server.url
    // Which store and where (never a password): an ambient DATABASE_URL must not go unnoticed.
    const where = `${plural(sources.length, 'source')} (${describeStore(resolved.database)})`
    if (!process.listeningAnnounced)
      log.info(`listening on ${url} with ${where}`, { event: 'listening', url })
    const onReloaded = process.onReloaded ?? auditReload(opened.sourceConfigs)
    const reloader = new ConfigReloader(resolved, {
      ...process,
      sources: registry,
      parts: features.flatMap((f) => (f.reload === undefined ? [] : [f.reload])),
      telemetry,
      onReloaded,
    })
    started.start()
    telemetry.start()
    for (const feature of features) await feature.start?.()
    const close = once(() =>
      runSteps([
        ['finish a reload under way, refuse others', () => reloader.stop()],
        ['stop taking connections', () => server.stopListening()],
        ['let deliveries in flight finish', () => started.drain(CLOSE_GRACE_MS)],
        // Requests still being answered got the same grace; then their connections are cut.
        ['cut the connections left', () => server.cutConnections()],
        ['stop delivery', () => started.stop()],
        ['commit ingest still waiting', () => ingest.stop()],
        ...features.toReversed().map((f): Step => [`stop the ${f.name} feature`, () => f.stop?.()]),
        ['stop the console', () => operator.stop()],
        ['stop following the sources', () => sync.stop()],
        ['stop telemetry', () => telemetry.stop()],
        ['close the notification channel', () => notifications.close()],
        ['close the store', () => store.close()],
        ['log closed', () => log.info('closed', { event: 'closed' })],
        ['stop the credentials limiter', () => auth.authLimiter.stop()],
        ['forget the reloaded secrets', () => reloader.forgetSecrets()],
        ...last,
      ]),
    )
    return { url, close, reload: (next) => reloader.reload(next) }
  } catch (error) {
    await runSteps(undo)
    throw error
  }
}
