import type { IncomingMessage, ServerResponse } from 'node:http'
import { log } from '../log'
import { sendError } from './body'
import { HttpError } from './http-error'
import type { Route } from './route'

/**
 * The relay's routes (docs/relay.md), as a `node:http` request listener: it only finds the route for
 * a request (404 or 405 when there is none) and turns whatever a route throws into an answer. The
 * routes themselves live with their area (`ingest/`, `console/`, `telemetry/`); `relay.ts` lists them.
 */
export function createRouter(routes: readonly Route[]): (req: IncomingMessage, res: ServerResponse) => void {
  const dispatch = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = parseRequestUrl(req)
    // The first route of the method whose pattern matches; only the patterns of that method are
    // tried (every request pays this: ingest's batches come in hundreds a second).
    for (const route of routes) {
      if (route.method !== req.method) continue
      const match = route.pattern.exec(url.pathname)
      if (match !== null) return route.handler(req, res, match.slice(1), url)
    }
    const matching = routes.filter((route) => route.pattern.test(url.pathname))
    if (matching.length === 0)
      throw new HttpError(404, 'ERR_NOT_FOUND', `no such endpoint: ${req.method} ${url.pathname}`)
    const allow = matching.map((route) => route.method).join(', ')
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
