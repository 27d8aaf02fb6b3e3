import type { IncomingMessage, ServerResponse } from 'node:http'
import { adminRoutes } from '../admin/routes'
import type { AdminContext } from '../admin/admin'
import { type IngestContext, ingestRoutes } from '../ingest/routes'
import { log } from '../log'
import type { AdminToken } from './auth'
import type { AuthLimiter } from './auth-limiter'
import { sendError } from './body'
import { HttpError } from './http-error'
import type { Route } from './route'

/** Everything the routes work on. */
export interface RouterContext extends AdminContext, IngestContext {
  adminToken: AdminToken
  authLimiter: AuthLimiter
  /** More routes, served beside the API: health, metrics and the operator page (`ops/`). */
  routes?: readonly Route[]
}

/**
 * The relay's routes (DESIGN.md §3), as a `node:http` request listener: it only finds the route
 * for a request (404 or 405 when there is none) and turns whatever a route throws into an answer.
 * The routes themselves live with their area: `ingest/routes.ts`, `admin/routes.ts`, `ops/`.
 */
export function createRouter(context: RouterContext): (req: IncomingMessage, res: ServerResponse) => void {
  const routes: Route[] = [...ingestRoutes(context), ...adminRoutes(context), ...(context.routes ?? [])]

  const dispatch = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = parseRequestUrl(req)
    const matching = routes
      .map((route) => ({ route, match: route.pattern.exec(url.pathname) }))
      .filter((m) => m.match !== null)
    const found = matching.find((m) => m.route.method === req.method)
    if (found !== undefined) return found.route.handler(req, res, found.match!.slice(1), url)
    if (matching.length === 0)
      throw new HttpError(404, 'ERR_NOT_FOUND', `no such endpoint: ${req.method} ${url.pathname}`)
    const allow = matching.map((m) => m.route.method).join(', ')
    throw new HttpError(405, 'ERR_METHOD_NOT_ALLOWED', `${url.pathname} takes ${allow}`, { allow })
  }

  // Every throw, synchronous or not, ends here: a request must never take the process down.
  return (req, res) => {
    dispatch(req, res).catch((error: unknown) => {
      const path = (req.url ?? '/').split('?')[0]
      const httpError =
        error instanceof HttpError
          ? error
          : new HttpError(
              500,
              'ERR_INTERNAL',
              'the relay failed to handle the request; see its log (DEBUG=tracklet:relay)',
            )
      if (!(error instanceof HttpError)) {
        log.error(`${req.method} ${path} failed: ${(error as Error).stack ?? error}`, { event: 'internal-error' })
      } else {
        // A refusal is the client's business, one line per request: debug, or a flood could fill the disk.
        log[httpError.status >= 500 ? 'warn' : 'debug'](
          `${req.method} ${path} → ${httpError.status} ${httpError.code}`,
          {
            event: 'request-refused',
            status: httpError.status,
            code: httpError.code,
          },
        )
      }
      if (res.headersSent) res.destroy()
      else sendError(res, httpError)
    })
  }
}

// The request target as a URL; one the parser refuses (`GET http://[`) is the client's mistake.
function parseRequestUrl(req: IncomingMessage): URL {
  try {
    return new URL(req.url ?? '/', 'http://relay.invalid')
  } catch {
    throw new HttpError(400, 'ERR_INVALID_URL', 'the request target is not a valid URL')
  }
}
