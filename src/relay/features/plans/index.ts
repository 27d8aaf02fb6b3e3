import type { IncomingMessage } from 'node:http'
import { answeringStoreOutage } from '../../console/api-routes'
import type { ConsoleKit } from '../../console/page/operation-routes'
import { StoreCalls } from '../../console/store-unavailable'
import type { AdminToken } from '../../http/auth'
import type { AuthLimiter } from '../../http/auth-limiter'
import type { Store } from '../../store/store'
import type { Feature } from '../feature'
import { violationRoutes } from './page/violation-routes'
import { planCheck } from './plan-check'
import { violationApiRoutes } from './routes'

/** What tracking plans need from the relay. */
export interface PlansDeps {
  /** The outbox: its violations, where those found are recorded and read back. */
  store: Store
  adminToken: AdminToken
  authLimiter: AuthLimiter
  /** The operator page's kit: the violations view is a section of the page. */
  page: ConsoleKit
  now?: () => number
}

/**
 * Tracking plans (docs/plans.md): each message of a source with a plan checked at ingest against
 * its schema, what it breaks recorded, and the source's actions applied (`omit`, `block`); the
 * violations read back through `GET /v1/violations` and the page's `/ui/violations`. The plans
 * themselves are options, checked in `config/plan*.ts`.
 */
export function plansFeature(deps: PlansDeps): Feature {
  // A failure of the store itself is a 503, never a 500 with a stack.
  const violations = new StoreCalls().watch(deps.store).violations
  const authenticate = (req: IncomingMessage): void => {
    deps.authLimiter.guard(req, 'admin API: token', () => deps.adminToken.authenticate(req))
  }
  const routes = violationApiRoutes(violations, authenticate, deps.now ?? Date.now).map((route) => ({
    ...route,
    handler: answeringStoreOutage(route.handler),
  }))
  return {
    name: 'plans',
    ingestCheck: planCheck(),
    routes,
    page: { title: 'Violations', path: '/ui/violations', routes: violationRoutes(deps.page) },
  }
}
