import type { IncomingMessage } from 'node:http'
import type { Area } from '../area'
import type { RoutedSource } from '../config/sources'
import type { AdminToken } from '../http/auth'
import type { AuthLimiter } from '../http/auth-limiter'
import type { Store } from '../store/store'
import { adminRoutes } from './api-routes'
import type { ConsoleFunctions } from './function-health'
import type { PageContext } from './page/page-context'
import { pageRoutes } from './page/page-routes'
import { sourceRoutes } from '../features/sources/source-routes'
import type { SourcesContext } from '../features/sources/sources-api'
import { Sessions } from './page/sessions'
import type { WebhookRoutes } from './webhook-urls'

/** What the console needs from the relay. */
export interface ConsoleDeps {
  /** The outbox, as every write's outcome tells /healthz. */
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
  /** The sources of the file and of the admin API, and how a change is stored and spread. */
  sourceAdmin: Omit<SourcesContext, 'store'>
  /** The destinations' functions (docs/functions.md): their recent calls, the compile check of a `PUT`. */
  functions?: ConsoleFunctions
  /** Features' views of the operator page. */
  sections?: PageContext['sections']
}

/** The console's area, and whether a request carries a signed-in operator page's session. */
export interface Console extends Area {
  /** Whether `req`'s cookie names a live session of the operator page (its live view reads the stream so). */
  hasSession(req: IncomingMessage): Promise<boolean>
}

/**
 * The console, the area of the operator: the operations on the outbox (find, retry, pause,
 * deletions, audience syncs) served both as the JSON admin API (`/v1/…`) and as the operator
 * page (`/`, `/ui/…`), both signed with the admin token.
 */
export function createConsole(deps: ConsoleDeps): Console {
  const { store, sources, wake, webhooks, circuitChanged, adminToken, authLimiter, functions } = deps
  const operations = { store, sources, wake, webhooks, circuitChanged, adminToken, authLimiter, functions }
  const sessions = new Sessions(store.sessions)
  // A function given through the admin API (or kept by a page edit) is compiled by the delivery area's sandbox.
  const sourceAdmin = { ...deps.sourceAdmin, functions }
  return {
    routes: [
      ...adminRoutes(operations),
      ...sourceRoutes({ ...sourceAdmin, store, adminToken, authLimiter }),
      ...pageRoutes({
        ...operations,
        health: deps.health,
        metrics: deps.metrics,
        sourceAdmin,
        ...(deps.sections === undefined ? {} : { sections: deps.sections }),
      }),
    ],
    stop: () => {},
    hasSession: async (req) => (await sessions.find(req.headers.cookie).catch(() => undefined)) !== undefined,
  }
}
