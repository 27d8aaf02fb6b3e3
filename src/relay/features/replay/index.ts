import type { IncomingMessage } from 'node:http'
import type { SourceRegistry } from '../../sources/source-registry'
import { WEBHOOKS_DESTINATION } from '../../config/sources'
import { answeringStoreOutage } from '../../console/api-routes'
import { StoreCalls } from '../../console/store-unavailable'
import type { Delivery } from '../../delivery/area'
import type { RelayEvents } from '../../events/channel'
import type { AdminToken } from '../../http/auth'
import type { AuthLimiter } from '../../http/auth-limiter'
import type { QueueStep } from '../../store/replays'
import type { Store } from '../../store/store'
import type { Feature } from '../feature'
import { archiveRoutes } from './archive-routes'
import { ArchiveQueuer, SourceArchives } from './from-archive'
import { createReplayLane } from './lane'
import type { ReplayContext } from './replays-api'
import { replayRoutes } from './routes'
import type { ConsoleKit } from '../../console/page/operation-routes'
import { replayPageRoutes } from './page-routes'

/** What replay needs from the relay. */
export interface ReplayDeps {
  store: Store
  /** The sources of the file and of the admin API: their destinations, their archives. */
  registry: SourceRegistry
  /** The lane's share of delivery (its destinations, outbox, limits), and the configured URLs. */
  delivery: Pick<Delivery, 'lane' | 'addLane' | 'webhooks' | 'wake'>
  /** Where each copy's attempt is told (the live stream, `tracklet tail`, metrics). */
  events: RelayEvents
  adminToken: AdminToken
  authLimiter: AuthLimiter
  /** The relay's `allowPrivateNetworks`: whether `to.url` may name a private address. */
  allowPrivateNetworks: boolean
  /** The operator page's kit: the replays view is a section of the page. */
  page: ConsoleKit
}

/**
 * Replay (docs/replay.md): new deliveries of stored messages, from the outbox or from the
 * archive's files, made at a pace held across relays and sent in a lane of their own. Adds the
 * admin API's `/v1/replays` and `GET /v1/archive`, and the lane (run beside delivery's live worker,
 * drained with it). The operator page's replay views are served by the console for now.
 */
export function replayFeature(deps: ReplayDeps): Feature {
  const { registry, delivery, events } = deps
  // The API's store calls: a failure of the store itself is a 503, never a 500 with a stack.
  const store = new StoreCalls().watch(deps.store)
  const archives = new SourceArchives(() => registry.all().map((s) => s.settings))
  const fromArchive = new ArchiveQueuer(deps.store.replays, archives, WEBHOOKS_DESTINATION)
  const lane = createReplayLane({
    ...delivery.lane,
    observe: (attempt) => {
      if (events.listened) events.publish({ type: 'attempt', attempt })
    },
    queue: async () => both(await deps.store.replays.queue(), await fromArchive.step()),
  })
  delivery.addLane(lane)
  const context: ReplayContext = {
    store,
    sources: registry.live(),
    wake: () => lane.wake(),
    webhooks: delivery.webhooks,
    archives,
    allowPrivateNetworks: deps.allowPrivateNetworks,
  }
  const authenticate = (req: IncomingMessage): void => {
    deps.authLimiter.guard(req, 'admin API: token', () => deps.adminToken.authenticate(req))
  }
  const own = [...replayRoutes(context, authenticate), ...archiveRoutes(archives, authenticate)]
  const routes = own.map((route) => ({
    ...route,
    handler: answeringStoreOutage(route.handler),
  }))
  return {
    name: 'replay',
    routes,
    page: { title: 'Replays', path: '/ui/replays', routes: replayPageRoutes(deps.page) },
    start: () => lane.start(),
    stop: () => fromArchive.close(),
  }
}

// Two queueing steps as one: what both made, and the sooner of their next.
function both(a: QueueStep, b: QueueStep): QueueStep {
  const next = [a.nextIn, b.nextIn].filter((n): n is number => n !== undefined)
  return { queued: a.queued + b.queued, nextIn: next.length === 0 ? undefined : Math.min(...next) }
}
