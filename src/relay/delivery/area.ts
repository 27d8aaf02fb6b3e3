import type { Agent } from 'undici'
import type { Area } from '../area'
import type { RelaySource, ResolvedRelayOptions } from '../config/options'
import type { SourceRegistry } from '../sources/source-registry'
import { withoutFunction } from '../config/function-settings'
import { withoutConsent } from '../config/consent-setting'
import { DESTINATIONS } from '../destinations/index'
import type { DestinationModule, DestinationSender } from '../destinations/destination'
import { WEBHOOK_RETRIES } from '../destinations/webhooks/index'
import { newLeaseOwner } from './leases'
import { WEBHOOKS_DESTINATION } from '../config/sources'
import { RelayConfigError } from '../errors'
import { log, plural } from '../log'
import type { DeliveryRoute } from '../store/circuits'
import { RetentionSweeper } from '../store/retention'
import { OrderLines } from './order-lines'
import type { CircuitStore } from '../store/circuits'
import type { Store } from '../store/store'
import type { CircuitSnapshot } from '../store/circuit-snapshot'
import { type DeliveryStep, runStep } from './delivery-step'
import type { DeliverableMessage } from '../../shared/message'
import { guardedAgent } from './ssrf'
import { Worker, type WorkerOptions } from './worker'
import type { RelayEvents } from '../events/channel'
import { routesByUrl } from './worker-options'
import { slotLeaseMs } from './limits/slot-lease'

// On a database shared by several relays, work appears that this relay is not told of: messages
// another relay took in, retries it scheduled, leases of a relay that died. Each relay looks for
// it this often (one cheap claim per source when there is none).
const SHARED_STORE_POLL_MS = 1000

/** What delivery needs from the relay. */
export interface DeliveryDeps {
  options: ResolvedRelayOptions
  /** The outbox, as every write's outcome tells /healthz. */
  store: Store
  /** The circuits as opened: circuit writes are the breaker's, not a sign of the outbox's health. */
  circuits: CircuitStore
  /** Other processes use the store at once (`--workers`, or PostgreSQL): look for their work. */
  shared: boolean
  /**
   * The step each delivery passes through before its destination formats it (`delivery-step.ts`):
   * the features' (the destinations' functions, docs/functions.md); none: as stored.
   */
  step?: DeliveryStep | undefined
  /** Where delivery tells of each `attempt` as it settles. */
  events: RelayEvents
  /**
   * The sources, the config file's and the admin API's, followed as they change; without it, the
   * options' sources, fixed.
   */
  sources?: SourceRegistry
  /** The destinations the relay knows. @default DESTINATIONS (`destinations/index.ts`) */
  destinations?: readonly DestinationModule[]
}

/**
 * What a lane beside the live worker (the replays') shares with it: the outbox, the destinations
 * (updated in place), the retry rule, limits and step.
 */
export interface LaneDeps {
  store: Store
  destinations: Map<string, Map<string, DestinationSender>>
  retries: typeof WEBHOOK_RETRIES
  concurrency: number
  leaseTimeout: number
  step: DeliveryStep | undefined
  /** The per-URL limits, shared through the store by every relay (docs/delivery-controls.md). */
  limits: NonNullable<WorkerOptions['limits']>
  /**
   * A Webhooks sender of `source` to `url` alone, whatever its configured URLs: signed as the
   * source's are (its shared secret, Standard Webhooks; unsigned without Webhooks settings), none
   * of its URLs' headers, through the SSRF guard. `undefined` for an unknown source. The caller
   * closes it.
   */
  sendTo(source: string, url: string): DestinationSender | undefined
}

/** A lane a feature runs beside the live worker: told when sources change, drained with delivery. */
export interface SideLane {
  sourcesChanged(): void
  drain(graceMs: number): Promise<void>
}

/** Delivery's area: its routes (none) and stop, and what the others ask of it. */
export interface Delivery extends Area {
  /** What a lane beside the live worker shares with it. */
  readonly lane: LaneDeps
  /** Runs `lane` beside the live worker: told when the sources change, drained before delivery stops. */
  addLane(lane: SideLane): void
  /** Each webhook URL with the routes that send there: the console's endpoints and `url` filters. */
  readonly webhooks: Map<string, DeliveryRoute[]>
  /** Deliveries were queued: attempt what is due now. */
  wake(): void
  /** An operator paused or resumed `url`: read its circuit again at once. */
  circuitChanged(url: string): Promise<void>
  /** The breaker's view of each webhook URL. */
  circuits(): readonly CircuitSnapshot[]
  start(): void
  /**
   * `message` of `source` as its Webhooks destination would format it: after the delivery step
   * (the destination's function, docs/functions.md); `undefined` when the step ends it there
   * (dropped, failed). For `tracklet tail --forward-to`, which sends what delivery would.
   */
  beforeFormatting(source: string, message: DeliverableMessage): Promise<DeliverableMessage | undefined>
  /** Stops claiming; deliveries in flight get `graceMs` to finish (the rest go again at the next start). */
  drain(graceMs: number): Promise<void>
}

/**
 * Delivery, the area of the receivers: each due delivery claimed, sent through its source's
 * destinations behind the circuit breaker and the SSRF guard, and its outcome recorded; with the
 * retention sweep of settled deliveries.
 */
export async function createDelivery(deps: DeliveryDeps): Promise<Delivery> {
  const { options, store } = deps
  const sourcesNow = () => deps.sources?.all().map((s) => s.settings) ?? options.sources
  await failUnconfiguredSources(
    store,
    sourcesNow().map((s) => s.name),
  )
  const agent = guardedAgent({ allowPrivateNetworks: options.allowPrivateNetworks })
  const build: Builder = {
    modules: deps.destinations ?? DESTINATIONS,
    relayId: newLeaseOwner(),
    agent,
    limits: { timeout: options.webhookTimeout, responseBodyLimit: options.responseBodyLimit },
  }
  let destinations: Map<string, Map<string, DestinationSender>>
  try {
    destinations = buildDestinations(sourcesNow(), build)
  } catch (error) {
    void agent.close()
    throw error
  }
  const { step } = deps
  // What the live worker and the replays' lane share: the store, the destinations, the retry
  // rule (the platform's schedule and the window it keeps to, together), limits and step.
  const webhooksModule = build.modules.find((m) => m.name === WEBHOOKS_DESTINATION)
  const lane: LaneDeps = {
    store,
    destinations,
    // The rule of a delivery whose destination is gone; each sender judges its own by its own.
    retries: WEBHOOK_RETRIES,
    concurrency: options.concurrency,
    leaseTimeout: options.leaseTimeout,
    step,
    // The per-URL limits, shared through the store by every relay (docs/delivery-controls.md).
    limits: { store: store.endpointLimits, slotLeaseMs: slotLeaseMs(options.webhookTimeout) },
    sendTo: (source, url) => {
      const found = sourcesNow().find((s) => s.name === source)
      if (found === undefined || webhooksModule === undefined) return undefined
      // A source without Webhooks (an archive's alone) sends unsigned.
      const settings = found.destinations?.[WEBHOOKS_DESTINATION] ?? {}
      const { webhooks: _urls, ...signing } = withoutFunction(withoutConsent(settings)) as Record<string, unknown>
      const context = { source, relayId: build.relayId, agent: build.agent, limits: build.limits }
      return webhooksModule.create({ ...signing, webhooks: [{ url }] }, context)
    },
  }
  const worker = new Worker({
    ...lane,
    observe: (attempt) => {
      if (deps.events.listened) deps.events.publish({ type: 'attempt', attempt })
    },
    breaker: {
      ...options.breaker,
      maxInFlightPerUrl: options.maxInFlightPerUrl,
      circuits: deps.circuits,
      // The circuit changes this relay makes, for alerts.
      changed: {
        opened: (url, error, status) => deps.events.publish({ type: 'circuit', url, change: 'opened', error, status }),
        closed: (url, status) => deps.events.publish({ type: 'circuit', url, change: 'closed', status }),
      },
    },
  })
  // Lanes of features beside the live worker (the replays', docs/replay.md).
  const lanes: SideLane[] = []
  const retention = new RetentionSweeper(store, options.retention)
  const orderLines = new OrderLines(store)
  let poll: NodeJS.Timeout | undefined
  const webhooks = routesByUrl(destinations)
  // A source added, changed or removed (the admin API, a reload): the maps the worker and the
  // console hold are updated in place, so the next attempt uses the settings of its moment.
  const unsubscribe = deps.sources?.onChange(() => {
    const fresh = buildDestinations(sourcesNow(), build)
    const stale = [...destinations.values()].flatMap((named) => [...named.values()])
    replaceEntries(destinations, fresh)
    // Attempts under way keep the sender they hold; a destination's close lets it finish them.
    for (const sender of stale) void sender.close()
    replaceEntries(webhooks, routesByUrl(fresh))
    worker.sourcesChanged()
    for (const side of lanes) side.sourcesChanged()
  })
  return {
    routes: [],
    lane,
    addLane: (side) => {
      lanes.push(side)
    },
    webhooks,
    // New live deliveries only (ingest, a retry, a deletion): replays are found by the replay lane's poll.
    wake: () => worker.wake(),
    circuitChanged: (url) => worker.refreshCircuits([url]),
    circuits: () => worker.circuits(),
    beforeFormatting: async (source, message) => {
      const routeStep = step?.of(source, WEBHOOKS_DESTINATION)
      if (routeStep === undefined) return message
      const verdict = await runStep(routeStep, message)
      return verdict.kind === 'send' ? verdict.message : undefined
    },
    start: () => {
      worker.wake()
      retention.start()
      orderLines.start()
      if (deps.shared) poll = setInterval(() => worker.wake(), SHARED_STORE_POLL_MS).unref()
    },
    drain: async (graceMs) => {
      clearInterval(poll)
      await Promise.all([worker.stop(graceMs), ...lanes.map((side) => side.drain(graceMs))])
    },
    stop: async () => {
      unsubscribe?.()
      clearInterval(poll)
      for (const named of destinations.values()) for (const sender of named.values()) await sender.close()
      await agent.destroy()
      await retention.stop()
      await orderLines.stop()
    },
  }
}

// Deliveries that were in flight when the relay last stopped are still pending: due once their
// leases are void (at once on SQLite; after leaseTimeout on a shared PostgreSQL). Those of sources
// no longer configured can never be delivered: dead-lettered, and said so.
async function failUnconfiguredSources(store: Store, configured: string[]): Promise<void> {
  const orphaned = await store.failUnconfiguredSources(configured)
  if (orphaned === 0) return
  log.warn(
    `dead-lettered ${plural(orphaned, 'pending delivery', 'pending deliveries')} of sources no longer configured`,
    { event: 'dead-lettered', reason: 'source-unconfigured', count: orphaned },
  )
}

function replaceEntries<K, V>(target: Map<K, V>, source: ReadonlyMap<K, V>): void {
  target.clear()
  for (const [key, value] of source) target.set(key, value)
}

/** What each source's destinations are built with. */
interface Builder {
  modules: readonly DestinationModule[]
  relayId: string
  agent: Agent
  limits: { timeout: number; responseBodyLimit: number }
}

// Each source's destinations, by the modules' names, built again when the sources change; a
// module's refusal is a configuration error at the destination's path.
function buildDestinations(
  sources: readonly RelaySource[],
  build: Builder,
): Map<string, Map<string, DestinationSender>> {
  const bySource = new Map<string, Map<string, DestinationSender>>()
  sources.forEach((source, index) => {
    const destinations = new Map<string, DestinationSender>()
    for (const module of build.modules) {
      const settings = source.destinations?.[module.name]
      if (settings === undefined) continue
      const context = { source: source.name, relayId: build.relayId, agent: build.agent, limits: build.limits }
      try {
        destinations.set(module.name, module.create(withoutFunction(withoutConsent(settings)), context))
      } catch (error) {
        const field = `sources[${index}].destinations.${module.name}`
        throw new RelayConfigError(field, (error as Error).message, { cause: error })
      }
    }
    bySource.set(source.name, destinations)
  })
  return bySource
}
