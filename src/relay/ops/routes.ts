import { sendJson } from '../http/body'
import type { Route } from '../http/router'
import type { StoreHealth } from './health'

/** What the operations routes work on. */
export interface OpsContext {
  health: StoreHealth
}

/** The routes for the people who run the relay: `/healthz` (DESIGN.md §5). */
export function opsRoutes(context: OpsContext): Route[] {
  return [
    {
      method: 'GET',
      pattern: /^\/healthz$/,
      handler: async (_req, res) => {
        const report = context.health.report()
        // No token: a load balancer asks. A cached answer would hide a change.
        sendJson(res, report.ok ? 200 : 503, report, { 'cache-control': 'no-store' })
      },
    },
  ]
}
