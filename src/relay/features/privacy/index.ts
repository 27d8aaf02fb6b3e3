import type { SourceRegistry } from '../../sources/source-registry'
import { answeringStoreOutage } from '../../console/api-routes'
import { requestDeletion } from '../../console/deletions'
import { StoreCalls } from '../../console/store-unavailable'
import type { AdminToken } from '../../http/auth'
import type { AuthLimiter } from '../../http/auth-limiter'
import type { Route } from '../../http/route'
import type { ConsoleKit } from '../../console/page/operation-routes'
import type { Feature } from '../feature'
import type { IngestCheck } from '../../ingest/ingest-check'
import type { Notifications } from '../../store/notifications/channel'
import type { Store } from '../../store/store'
import { consentRulesOf } from './consent-rules'
import { suppressionPageRoutes } from './page/suppression-page-routes'
import { privacyCheck } from './privacy-check'
import { suppressionRoutes } from './routes'
import { SuppressionFollower } from './suppression-follower'

/** What privacy needs from the relay. */
export interface PrivacyDeps {
  store: Store
  notifications: Notifications
  /** The sources of the file and of the admin API: their consent rules, their names. */
  registry: SourceRegistry
  adminToken: AdminToken
  authLimiter: AuthLimiter
  /** Deliveries were queued (an erasure's delete messages): wake the delivery worker. */
  wake: () => void
  /** How often the suppressions' version is read, ms (tests). */
  pollMs?: number
  /** The operator page's kit: the suppressions view is a section of the page (none without it). */
  page?: ConsoleKit
}

/** Suppression and consent, as the relay composes them: a {@link Feature}. */
export interface Privacy extends Feature {
  readonly name: 'privacy'
  /** `POST`, `GET /v1/suppressions` and `DELETE /v1/suppressions/:userId`. */
  readonly routes: readonly Route[]
  /**
   * Suppression (a suppressed user's message is blocked) and consent (a message is withheld from
   * each destination whose rule it does not meet). Chained before the tracking plans' check: a
   * verdict with `withheld` and no `blocked` must still go on to the next check.
   */
  readonly ingestCheck: IngestCheck
  /** {@link ingestCheck} before `inner`, for a relay that chains checks by hand. */
  check(inner?: IngestCheck): IngestCheck
  stop(): Promise<void>
}

/**
 * Privacy (docs/privacy.md): a suppressed user's messages are acknowledged and dropped at ingest
 * on every relay of the store within 5 s; a destination with a consent rule gets only the
 * messages that consent to its categories. Resolves once the suppressions are read (so a relay
 * never serves ingest without them): the feature is started already, and `stop` ends it.
 */
export async function startPrivacy(deps: PrivacyDeps): Promise<Privacy> {
  const { registry } = deps
  // The API's store calls: a failure of the store itself is a 503, never a 500 with a stack.
  const store = new StoreCalls().watch(deps.store)
  const follower = new SuppressionFollower({
    store: deps.store.suppressions,
    notifications: deps.notifications,
    ...(deps.pollMs === undefined ? {} : { pollMs: deps.pollMs }),
  })
  await follower.start()
  let consent = consentRulesOf(registry)
  const unsubscribe = registry.onChange(() => {
    consent = consentRulesOf(registry)
  })
  const erase = async (userId: string) => {
    await requestDeletion(store, registry.routed(), userId)
    deps.wake()
  }
  const context = {
    store: store.suppressions,
    follower,
    erase,
    adminToken: deps.adminToken,
    authLimiter: deps.authLimiter,
    sourceNames: () => registry.routed().map((s) => s.name),
  }
  const routes = suppressionRoutes(context).map((route) => ({ ...route, handler: answeringStoreOutage(route.handler) }))
  const rules = { suppressed: () => follower.current(), consentOf: (source: string) => consent.get(source) }
  return {
    name: 'privacy',
    routes,
    ingestCheck: privacyCheck(rules),
    check: (inner) => privacyCheck(rules, inner),
    ...(deps.page === undefined
      ? {}
      : {
          page: {
            title: 'Suppressions',
            path: '/ui/suppressions',
            routes: suppressionPageRoutes(deps.page, context),
          },
        }),
    stop: async () => {
      unsubscribe()
      await follower.stop()
    },
  }
}
