import type { IncomingMessage, ServerResponse } from 'node:http'
import type { AdminToken } from '../http/auth'
import type { AuthLimiter } from '../http/auth-limiter'
import { readJsonBody, sendError, sendJson } from '../http/body'
import { HttpError } from '../http/http-error'
import type { Route } from '../http/route'
import { type AdminContext, handleAudienceSync, handleDeletion, handleRetry, refuseNul } from './operations'
import { handlePause, handleEndpoints, handleResume } from './endpoints'
import { handleFind, handleGetDelivery, handleRetryMatching } from './find'
import { snakeCase } from './audiences'
import { logStoreUnavailable, StoreCalls, StoreUnavailableError } from './store-unavailable'

/** The admin API's body limit: an audience sync can list many user ids. */
const MAX_ADMIN_BODY_BYTES = 10_000_000

/** What the admin routes work on. */
export interface AdminRoutesContext extends AdminContext {
  adminToken: AdminToken
  /** Counts failed admin tokens per client address, and refuses an address over its failures. */
  authLimiter: AuthLimiter
}

/** The admin API (docs/relay.md, "Admin API"): deletions, audience syncs, the delivery log and retries by hand. */
export function adminRoutes(routesContext: AdminRoutesContext): Route[] {
  // Every store call of the API: a failure of the store itself is a 503, never a 500 with a stack.
  const context = { ...routesContext, store: new StoreCalls().watch(routesContext.store) }
  const authenticate = (req: IncomingMessage): void => {
    context.authLimiter.guard(req, 'admin API: token', () => context.adminToken.authenticate(req))
  }
  const withBody = async (
    req: IncomingMessage,
    res: ServerResponse,
    status: number,
    handle: (body: Record<string, unknown>) => Promise<unknown>,
  ): Promise<void> => {
    authenticate(req)
    sendJson(res, status, await handle(await readJsonBody(req, MAX_ADMIN_BODY_BYTES)))
  }
  return apiRoutes(context, authenticate, withBody).map((route) => ({
    ...route,
    handler: answeringStoreOutage(route.handler),
  }))
}

// A store outage is answered here, logged in one line with its cause: the router would log a
// second, causeless line.
export function answeringStoreOutage(handler: Route['handler']): Route['handler'] {
  return async (req, res, params, url) => {
    try {
      await handler(req, res, params, url)
    } catch (error) {
      if (!(error instanceof StoreUnavailableError) || res.headersSent) throw error
      logStoreUnavailable(req.method, url.pathname, error)
      sendError(res, error)
    }
  }
}

function apiRoutes(
  context: AdminRoutesContext,
  authenticate: (req: IncomingMessage) => void,
  withBody: (
    req: IncomingMessage,
    res: ServerResponse,
    status: number,
    handle: (body: Record<string, unknown>) => Promise<unknown>,
  ) => Promise<void>,
): Route[] {
  const now = context.now ?? Date.now
  return [
    {
      method: 'POST',
      pattern: /^\/v1\/deletions$/,
      handler: (req, res) => withBody(req, res, 202, (body) => handleDeletion(context, body)),
    },
    {
      method: 'PUT',
      pattern: /^\/v1\/audiences\/([^/]+)$/,
      handler: (req, res, [name]) =>
        withBody(req, res, 200, (body) => handleAudienceSync(context, audienceName(name!), body)),
    },
    {
      method: 'GET',
      pattern: /^\/v1\/deliveries$/,
      handler: async (req, res, _params, url) => {
        authenticate(req)
        sendJson(res, 200, await handleFind(context, url.searchParams))
      },
    },
    {
      method: 'POST',
      pattern: /^\/v1\/deliveries\/retry$/,
      handler: (req, res) => withBody(req, res, 200, (body) => handleRetryMatching(context, body)),
    },
    {
      method: 'GET',
      pattern: /^\/v1\/deliveries\/([^/]+)$/,
      handler: async (req, res, [id]) => {
        authenticate(req)
        sendJson(res, 200, await handleGetDelivery(context, id!))
      },
    },
    {
      method: 'GET',
      pattern: /^\/v1\/endpoints$/,
      handler: async (req, res) => {
        authenticate(req)
        sendJson(res, 200, await handleEndpoints(context, now()))
      },
    },
    {
      method: 'POST',
      pattern: /^\/v1\/endpoints\/([^/]+)\/(pause|resume)$/,
      handler: async (req, res, [id, verb]) => {
        authenticate(req)
        const change = verb === 'pause' ? handlePause : handleResume
        sendJson(res, 200, await change(context, id!, now()))
      },
    },
    {
      method: 'POST',
      pattern: /^\/v1\/deliveries\/([^/]+)\/retry$/,
      handler: async (req, res, [id]) => {
        authenticate(req)
        sendJson(res, 202, await handleRetry(context, id!))
      },
    },
  ]
}

function audienceName(encoded: string): string {
  let name: string
  try {
    name = decodeURIComponent(encoded)
  } catch {
    throw new HttpError(400, 'ERR_INVALID_AUDIENCE', 'the audience name in the path is not valid percent-encoding')
  }
  if (name.trim().length === 0 || name.length > 200)
    throw new HttpError(400, 'ERR_INVALID_AUDIENCE', 'the audience name must be 1 to 200 characters')
  refuseNul('ERR_INVALID_AUDIENCE', 'the audience name', name)
  // The trait is the name in snake_case, which keeps only ASCII letters and digits.
  if (snakeCase(name) === '') {
    throw new HttpError(
      400,
      'ERR_INVALID_AUDIENCE',
      `the audience name ${JSON.stringify(name)} has no ASCII letter or digit: its snake_case trait name would be empty`,
    )
  }
  return name
}
