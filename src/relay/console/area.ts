import type { Area } from '../area'
import type { RoutedSource } from '../config/sources'
import type { AdminToken } from '../http/auth'
import type { AuthLimiter } from '../http/auth-limiter'
import type { Store } from '../store/store'
import { adminRoutes } from './api-routes'
import type { ConsoleFunctions } from './function-health'
import type { PageContext } from './page/page-context'
import type { ConsoleKit } from './page/operation-routes'
import { operatorPage } from './page/page-routes'
import type { WebhookRoutes } from './webhook-urls'

/** What the console needs from the relay. */
export interface ConsoleDeps {
  /** The outbox, every write watched (docs/architecture.md, "The store, watched once"). */
  store: Store
  sources: readonly RoutedSource[]
  /** Deliveries were queued (a retry, a deletion): wake the delivery worker. */
  wake: () => void
  /** Each configured webhook URL with the routes that send there. */
  webhooks: WebhookRoutes
  /** An operator paused or resumed `url`: the worker reads its circuit again at once. */
  circuitChanged: (url: string) => Promise<void>
  adminToken: AdminToken
  /** Counts failed admin tokens and sign-ins per client address. */
  authLimiter: AuthLimiter
  health: PageContext['health']
  metrics: PageContext['metrics']
  /** The destinations' functions (docs/functions.md): their recent calls, the compile check of a `PUT`. */
  functions?: ConsoleFunctions
}

/** The console's area, and the kit the features build their sections of the operator page with. */
export interface Console extends Area {
  /** Sessions, sign-in and refusals shown as pages, for a feature's page section. */
  readonly page: ConsoleKit
}

/**
 * The console, the area of the operator: the operations on the outbox (find, retry, pause,
 * deletions, audience syncs) served both as the JSON admin API (`/v1/…`) and as the operator
 * page (`/`, `/ui/…`), both signed with the admin token.
 */
export function createConsole(deps: ConsoleDeps): Console {
  const { store, sources, wake, webhooks, circuitChanged, adminToken, authLimiter } = deps
  const operations = { store, sources, wake, webhooks, circuitChanged, adminToken, authLimiter }
  const withFunctions = deps.functions === undefined ? operations : { ...operations, functions: deps.functions }
  const page = operatorPage({ ...withFunctions, health: deps.health, metrics: deps.metrics })
  return {
    routes: [...adminRoutes(withFunctions), ...page.routes],
    page: page.kit,
    stop: () => {},
  }
}
