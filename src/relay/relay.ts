import { describeStore } from './config/database-value'
import type { RelayOptions } from './config/options'
import { secretsOf } from './config/secrets'
import { logStartupWarnings } from './config/startup-warnings'
import { refuseWorkersOutsideCommand, validateRelayOptions } from './config/validate'
import { createConsole } from './console/area'
import { createDelivery } from './delivery/area'
import { RelayEvents } from './events/channel'
import { watchWrites } from './events/watched-store'
import * as compose from './features/compose'
import { checkFeatureOrder, type Feature } from './features/feature'
import { startFunctions } from './features/functions/index'
import { liveFeature } from './features/live/index'
import { plansFeature } from './features/plans/index'
import { replayFeature } from './features/replay/index'
import { startPrivacy } from './features/privacy/index'
import { sourcesFeature } from './features/sources/index'
import { AdminToken } from './http/auth'
import { AuthLimiter } from './http/auth-limiter'
import { createRouter } from './http/router'
import { listen } from './http/server'
import { createIngest } from './ingest/area'
import { log, plural, redactFromLog, useLogLevel } from './log'
import type { Relay } from './relay-api'
import { openSources } from './sources/open-sources'
import { ConfigReloader, type ReloadTargets } from './sources/reload'
import { auditReload } from './sources/reload-audit'
import { once, runSteps, type Step } from './steps'
import { openNotifications } from './store/notifications/open'
import { openStore } from './store/open-store'
import { createTelemetry, type TelemetryDeps } from './telemetry/area'

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
 * lists what the relay is made of (docs/architecture.md), in order, each on what is above it in
 * the list: the layers (the store, watched once; events; notifications; the sources), the areas
 * (delivery, telemetry, the console, ingest), the features, then the router. Each step that
 * started is undone, in reverse, if a later one fails.
 */
export async function startRelay(options: RelayOptions, process: RelayProcess): Promise<Relay> {
  const resolved = validateRelayOptions(options)
  refuseWorkersOutsideCommand(resolved, process.sharedByProcesses)
  // What close() and a failed start end with; each started step is undone, in reverse, before.
  const last: Step[] = [
    ['forget the secrets', redactFromLog(secretsOf(resolved))],
    ['release the log level', useLogLevel(resolved.logLevel)],
  ]
  const undo: Step[] = [...last]
  if (!process.warningsLogged) void logStartupWarnings(resolved)
  try {
    // The layers.
    const { storeTimeout, database } = resolved
    const { sharedByProcesses } = process
    const opened = await openStore(database, { storeTimeout, sharedByProcesses })
    undo.unshift(['close the store', () => opened.close()])
    const events = new RelayEvents()
    // Every area writes through this copy; each write's outcome is a `write` event.
    const store = watchWrites(opened, events)
    // The one database notification channel: configuration changes and the live view share it.
    const notifications = openNotifications(database)
    undo.unshift(['close the notification channel', () => notifications.close()])
    const { registry, sync, box } = await openSources(resolved, opened.sourceConfigs, notifications)
    undo.unshift(['stop following the sources', () => sync.stop()])
    const sources = registry.live() // the file's and the admin API's, updated in place
    // The admin token, and the limiter every credential check goes through.
    const authLimiter = new AuthLimiter({ trustProxy: resolved.trustProxy })
    const adminToken = new AdminToken(resolved.adminToken, resolved.readToken)
    const auth = { adminToken, authLimiter }
    undo.unshift(['stop the credentials limiter', () => authLimiter.stop()])

    // Each feature made so far: stopped, in reverse, if the start fails.
    const made: Feature[] = []
    undo.unshift(['stop the features', () => runSteps(made.toReversed().map(stopStep))])
    const make = <F extends Feature>(feature: F): F => {
      made.push(feature)
      return feature
    }
    // The destinations' functions compile before delivery: its step calls them.
    const functions = make(
      await startFunctions({ options: resolved, registry, events, store, ...auth }),
    )

    // The areas. A SQLite file shared by `--workers` processes is shared like PostgreSQL.
    const shared = store.kind === 'postgres' || sharedByProcesses
    const onStore = { options: resolved, store, circuits: opened.circuits, shared, events }
    const step = compose.deliveryStepOf([functions])
    const delivery = await createDelivery({ ...onStore, sources: registry, step })
    undo.unshift(['stop delivery', () => delivery.stop()])
    const telemetry = createTelemetry({
      store: opened,
      sources,
      registry,
      events,
      circuits: () => delivery.circuits(),
      scrapeTokens: [resolved.metricsToken, resolved.adminToken, resolved.readToken],
      figures: process.figures,
      ...auth,
    })
    undo.unshift(['stop telemetry', () => telemetry.stop()])
    const { wake, webhooks } = delivery
    const circuitChanged = (url: string) => delivery.circuitChanged(url)
    const { health, readings: metrics } = telemetry
    const onOutbox = { store, sources, wake, webhooks, circuitChanged, health, metrics }
    const operator = createConsole({ ...onOutbox, functions: functions.console, ...auth })
    const page = operator.page

    // Privacy resolves once the suppressions are read: no message is taken in without them.
    const privacy = make(
      await startPrivacy({ store, notifications, registry, ...auth, wake, page }),
    )

    // The features, in order: each one folder under features/ (docs/architecture.md,
    // "Features"). Privacy before plans: no violation is kept of a suppressed user's message.
    const features: readonly Feature[] = [
      privacy,
      plansFeature({ store, page, ...auth }),
      functions,
      liveFeature({
        options: resolved,
        registry,
        alertClaims: store.alertClaims,
        notifications,
        fanIn: store.kind === 'postgres',
        page,
        beforeFormatting: delivery.beforeFormatting,
        ...auth,
      }),
      sourcesFeature({ store, registry, sync, box, functions: functions.console, page, ...auth }),
      replayFeature({
        store,
        registry,
        delivery,
        events,
        ...auth,
        allowPrivateNetworks: resolved.allowPrivateNetworks,
        page,
      }),
    ]
    made.splice(0, made.length, ...features)
    checkFeatureOrder(features)
    const unsubscribeReaders = compose.subscribeReaders(features, events)
    undo.unshift(['stop reading events', unsubscribeReaders])

    const check = compose.ingestCheckOf(features)
    const tap = compose.ingestTapOf(features)
    const ingest = createIngest({
      store,
      sources: registry,
      authLimiter,
      wake,
      events,
      ...(check === undefined ? {} : { check }),
      ...(tap === undefined ? {} : { tap }),
    })
    const router = createRouter([
      ...ingest.routes,
      ...operator.routes,
      ...compose.routesOf(features),
      ...telemetry.routes,
    ])
    const server = await listen(telemetry.timeRequests(router), resolved)
    const url = server.url
    // Which store and where (never a password): an ambient DATABASE_URL must not go unnoticed.
    const where = `${plural(sources.length, 'source')} (${describeStore(database)})`
    if (!process.listeningAnnounced)
      log.info(`listening on ${url} with ${where}`, { event: 'listening', url })
    const reloader = new ConfigReloader(resolved, {
      sources: registry,
      parts: compose.reloadPartsOf(features),
      warningsLogged: process.warningsLogged,
      onReloaded: process.onReloaded ?? auditReload(opened.sourceConfigs),
    })
    delivery.start()
    telemetry.start()
    for (const feature of features) await feature.start?.()
    const close = once(() =>
      runSteps([
        ['finish a reload under way, refuse others', () => reloader.stop()],
        ['stop taking connections', () => server.stopListening()],
        ['let deliveries in flight finish', () => delivery.drain(CLOSE_GRACE_MS)],
        // Requests still being answered got the same grace; then their connections are cut.
        ['cut the connections left', () => server.cutConnections()],
        ['stop delivery', () => delivery.stop()],
        ['commit ingest still waiting', () => ingest.stop()],
        ['stop reading events', unsubscribeReaders],
        ...features.toReversed().map(stopStep),
        ['stop the console', () => operator.stop()],
        ['stop following the sources', () => sync.stop()],
        ['stop telemetry', () => telemetry.stop()],
        ['close the notification channel', () => notifications.close()],
        ['close the store', () => store.close()],
        ['log closed', () => log.info('closed', { event: 'closed' })],
        ['stop the credentials limiter', () => authLimiter.stop()],
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

// A feature's stop, as a named step of the relay's shutdown.
function stopStep(feature: Feature): Step {
  return [`stop the ${feature.name} feature`, () => feature.stop?.()]
}
