import type { IncomingMessage } from 'node:http'
import type { AdminToken, TokenRole } from '../../http/auth'
import type { AuthLimiter } from '../../http/auth-limiter'
import { readJsonBody, sendJson } from '../../http/body'
import { HttpError } from '../../http/http-error'
import type { Route } from '../../http/route'
import { suppressionRequestOf, MAX_SUPPRESSION_IDS, sourceQueryOf } from './suppression-request'
import { addSuppressions, listSuppressions, removeSuppression, type SuppressionsContext } from './suppressions-api'

// 5,000 ids of a few hundred characters each fit with room to spare.
const MAX_BODY_BYTES = MAX_SUPPRESSION_IDS * 1000

/** What the suppression routes work on. */
export interface SuppressionRoutesContext extends SuppressionsContext {
  adminToken: AdminToken
  authLimiter: AuthLimiter
  /** The names of the sources configured now (a suppression's `source` names one). */
  sourceNames: () => readonly string[]
}

/**
 * `POST /v1/suppressions`, `GET /v1/suppressions?source`, `DELETE /v1/suppressions/:userId?source`
 * (docs/privacy.md), behind the admin token (the read token may list).
 */
export function suppressionRoutes(context: SuppressionRoutesContext): Route[] {
  const authenticate = (req: IncomingMessage): TokenRole =>
    context.authLimiter.guard(req, 'admin API: token', () => context.adminToken.authenticate(req))
  return [
    {
      method: 'POST',
      pattern: /^\/v1\/suppressions$/,
      handler: async (req, res) => {
        const actor = authenticate(req)
        const request = suppressionRequestOf(await readJsonBody(req, MAX_BODY_BYTES), context.sourceNames())
        sendJson(res, 200, await addSuppressions(context, request, actor))
      },
    },
    {
      method: 'GET',
      pattern: /^\/v1\/suppressions$/,
      handler: async (req, res, _params, url) => {
        authenticate(req)
        sendJson(res, 200, await listSuppressions(context, sourceQueryOf(url.searchParams)))
      },
    },
    {
      method: 'DELETE',
      pattern: /^\/v1\/suppressions\/([^/]+)$/,
      handler: async (req, res, [encoded], url) => {
        const actor = authenticate(req)
        const userId = decodedUserId(encoded!)
        sendJson(res, 200, await removeSuppression(context, userId, sourceQueryOf(url.searchParams), actor))
      },
    },
  ]
}

function decodedUserId(encoded: string): string {
  try {
    return decodeURIComponent(encoded)
  } catch {
    throw new HttpError(400, 'ERR_INVALID_USER', 'the user id in the path is not valid percent-encoding')
  }
}
