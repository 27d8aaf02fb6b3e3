import type { IncomingMessage } from 'node:http'
import { AdminToken } from '../http/auth'
import type { AuthLimiter } from '../http/auth-limiter'
import { sendJson } from '../http/body'
import { HttpError } from '../http/http-error'
import type { Route } from '../http/route'
import { type StoreHealth, withoutErrors } from './health'
import type { RelayMetrics } from './metrics'

/** What the operations routes work on. */
export interface OpsContext {
  health: StoreHealth
  metrics: RelayMetrics
  /** The tokens that may read `/metrics`: the metrics token and the admin token, as configured. */
  scrapeTokens: readonly (string | undefined)[]
  /** Counts failed scrape tokens per client address, and refuses an address over its failures. */
  authLimiter: AuthLimiter
  /** Whoever sends it sees the errors behind a 503 of `/healthz`. */
  adminToken: AdminToken
}

/** The routes for the people who run the relay: `/healthz` and `/metrics` (DESIGN.md §5). */
export function opsRoutes(context: OpsContext): Route[] {
  const scrapers = context.scrapeTokens.flatMap((token) => (token === undefined ? [] : [new AdminToken(token)]))
  return [
    {
      method: 'GET',
      pattern: /^\/healthz$/,
      handler: async (req, res) => {
        const report = context.health.report()
        // No token: a load balancer asks, and sees no error text. A cached answer would hide a change.
        const shown = showsErrors(context, req) ? report : withoutErrors(report)
        sendJson(res, report.ok ? 200 : 503, shown, { 'cache-control': 'no-store' })
      },
    },
    {
      method: 'GET',
      pattern: /^\/metrics$/,
      handler: async (req, res) => {
        context.authLimiter.guard(req, 'metrics: token', () => authenticateScrape(scrapers, req))
        const { contentType, text } = await context.metrics.scrape()
        res.writeHead(200, {
          'content-type': contentType,
          'content-length': Buffer.byteLength(text),
          'cache-control': 'no-store',
        })
        res.end(text)
      },
    },
  ]
}

// Whether `req` carries the admin token. A wrong one counts as a failed authentication, but the
// answer is the one without errors, never a 401 or 429: a load balancer must always get its answer.
function showsErrors(context: OpsContext, req: IncomingMessage): boolean {
  if (req.headers.authorization === undefined) return false
  try {
    context.authLimiter.guard(req, 'admin API: token', () => context.adminToken.authenticate(req))
    return true
  } catch {
    return false
  }
}

// Any configured token will do; a wrong one gets the same answer as none.
function authenticateScrape(scrapers: readonly AdminToken[], req: IncomingMessage): void {
  if (scrapers.length === 0) {
    throw new HttpError(401, 'ERR_UNAUTHORIZED', '/metrics is closed: the relay has no metricsToken or adminToken', {
      'www-authenticate': 'Bearer',
    })
  }
  for (const scraper of scrapers) {
    try {
      scraper.authenticate(req)
      return
    } catch {
      // try the next token
    }
  }
  throw new HttpError(
    401,
    'ERR_UNAUTHORIZED',
    'send the metricsToken or the adminToken: Authorization: Bearer <token>',
    { 'www-authenticate': 'Bearer' },
  )
}
