import type { IncomingMessage, ServerResponse } from 'node:http'
import { MAX_BATCH_BYTES } from '../../shared/limits'
import { MESSAGE_TYPES, type MessageType } from '../../shared/message'
import { type AdminContext, handleAudienceSync, handleDeletion, handleDeliveryLog, handleRetry } from '../admin/admin'
import { snakeCase } from '../admin/audiences'
import type { GroupCommit } from '../ingest/group-commit'
import { batchMessages, type IngestAnswer, ingest, singleMessage } from '../ingest/ingest'
import { log } from '../log'
import type { RoutedSource } from '../sources'
import type { AdminToken, WriteKeys } from './auth'
import { readJsonBody, sendError, sendJson } from './body'
import { HttpError } from './http-error'

/** The admin API's body limit: an audience sync can list many user ids. */
const MAX_ADMIN_BODY_BYTES = 10_000_000

/** Everything the routes work on. */
export interface RouterContext extends AdminContext {
  writeKeys: WriteKeys<RoutedSource>
  adminToken: AdminToken
  /** Where ingest commits its deliveries, together with other requests of the moment. */
  commits: GroupCommit
  /** More routes, served beside the API: health, metrics and the operator page (`ops/`). */
  routes?: readonly Route[]
  /** Told how each ingest request ended (metrics). Must not throw. */
  observeIngest?: IngestObserver
}

/** What hears of ingest requests: each answer, or the error that refused the request whole. */
export interface IngestObserver {
  /** `filtered` of the accepted messages were blocked by the source's schema (never delivered). */
  answered(source: string, answer: IngestAnswer, filtered: number): void
  refused(error: unknown): void
}

/** Answers one request; `params` are the route pattern's groups. */
export type Handler = (req: IncomingMessage, res: ServerResponse, params: string[], url: URL) => Promise<void>

/** A method and path pattern, and its handler. */
export interface Route {
  method: string
  pattern: RegExp
  handler: Handler
}

/** The relay's routes (DESIGN.md §3), as a `node:http` request listener. */
export function createRouter(context: RouterContext): (req: IncomingMessage, res: ServerResponse) => void {
  const ingestRoute = async (
    req: IncomingMessage,
    res: ServerResponse,
    messagesOf: (body: Record<string, unknown>) => unknown[],
  ): Promise<void> => {
    const receivedAt = new Date()
    // Basic auth is checked before the body is read; without an Authorization header the write
    // key can only be in the body, so that check waits for it.
    const authorized = context.writeKeys.fromAuthorization(req)
    const body = await readJsonBody(req, MAX_BATCH_BYTES)
    const source = authorized ?? context.writeKeys.fromBody(body)
    // A batch's sentAt is on the body; a single call's body is its message, and sentAt with it.
    const { answer, filtered } = await ingest(context.commits, source, messagesOf(body), {
      receivedAt,
      sentAt: body['sentAt'],
    })
    context.observeIngest?.answered(source.name, answer, filtered)
    if (answer.accepted > filtered) context.wake()
    if (answer.refused.length > 0 || filtered > 0) {
      // Per request: debug. Refusals are counted in /metrics; one client's junk must not flood the log.
      log.debug(
        `source ${source.name}: ${answer.accepted} accepted (${filtered} of them blocked by its schema), ${answer.refused.length} refused`,
        {
          event: 'batch-answered',
          source: source.name,
          accepted: answer.accepted,
          filtered,
          refused: answer.refused.length,
        },
      )
    }
    sendJson(res, answer.success ? 200 : 400, answer)
  }
  const admin = async (
    req: IncomingMessage,
    res: ServerResponse,
    status: number,
    handle: (body: Record<string, unknown>) => Promise<unknown>,
  ): Promise<void> => {
    context.adminToken.authenticate(req)
    sendJson(res, status, await handle(await readJsonBody(req, MAX_ADMIN_BODY_BYTES)))
  }

  const observed = (request: Promise<void>): Promise<void> =>
    request.catch((error: unknown) => {
      context.observeIngest?.refused(error)
      throw error
    })

  const routes: Route[] = [
    {
      method: 'POST',
      pattern: /^\/v1\/batch$/,
      handler: (req, res) => observed(ingestRoute(req, res, batchMessages)),
    },
    {
      method: 'POST',
      pattern: new RegExp(`^/v1/(${MESSAGE_TYPES.join('|')})$`),
      handler: (req, res, [type]) =>
        observed(ingestRoute(req, res, (body) => [singleMessage(type as MessageType, body)])),
    },
    {
      method: 'POST',
      pattern: /^\/v1\/deletions$/,
      handler: (req, res) => admin(req, res, 202, (body) => handleDeletion(context, body)),
    },
    {
      method: 'PUT',
      pattern: /^\/v1\/audiences\/([^/]+)$/,
      handler: (req, res, [name]) =>
        admin(req, res, 200, (body) => handleAudienceSync(context, audienceName(name!), body)),
    },
    {
      method: 'GET',
      pattern: /^\/v1\/deliveries$/,
      handler: async (req, res, _params, url) => {
        context.adminToken.authenticate(req)
        sendJson(res, 200, await handleDeliveryLog(context, url.searchParams))
      },
    },
    {
      method: 'POST',
      pattern: /^\/v1\/deliveries\/([^/]+)\/retry$/,
      handler: async (req, res, [id]) => {
        context.adminToken.authenticate(req)
        sendJson(res, 202, await handleRetry(context, id!))
      },
    },
    ...(context.routes ?? []),
  ]

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

function audienceName(encoded: string): string {
  let name: string
  try {
    name = decodeURIComponent(encoded)
  } catch {
    throw new HttpError(400, 'ERR_INVALID_AUDIENCE', 'the audience name in the path is not valid percent-encoding')
  }
  if (name.trim().length === 0 || name.length > 200)
    throw new HttpError(400, 'ERR_INVALID_AUDIENCE', 'the audience name must be 1 to 200 characters')
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
