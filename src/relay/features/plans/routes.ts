import type { IncomingMessage } from 'node:http'
import type { Route } from '../../http/route'
import { sendJson } from '../../http/body'
import type { ViolationStore } from '../../store/violations'
import { handleViolations } from './violations-api'

/** `GET /v1/violations` (docs/plans.md): the plans' violations, newest first, a page at a time. */
export function violationApiRoutes(
  violations: Pick<ViolationStore, 'find'>,
  authenticate: (req: IncomingMessage) => void,
  now: () => number,
): Route[] {
  return [
    {
      method: 'GET',
      pattern: /^\/v1\/violations$/,
      handler: async (req, res, _params, url) => {
        authenticate(req)
        sendJson(res, 200, await handleViolations(violations, url.searchParams, now()))
      },
    },
  ]
}
