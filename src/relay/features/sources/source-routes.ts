import type { IncomingMessage, ServerResponse } from 'node:http'
import type { AdminToken, TokenRole } from '../../http/auth'
import type { AuthLimiter } from '../../http/auth-limiter'
import { readJsonBody, sendJson } from '../../http/body'
import { HttpError } from '../../http/http-error'
import type { Route } from '../../http/route'
import { answeringStoreOutage } from '../../console/api-routes'
import { handleAudit } from './audit-log'
import { refuseNul } from '../../console/operations'
import {
  addWriteKey,
  deleteSource,
  deleteWriteKey,
  getSource,
  listSources,
  putSource,
  type SourceAnswer,
  SourceProblems,
  type SourcesContext,
} from './sources-api'
import { StoreCalls } from '../../console/store-unavailable'

/** A source's settings are small: a megabyte is far more than five webhooks need. */
const MAX_SOURCE_BODY_BYTES = 1_000_000

/** What the sources' routes need besides {@link SourcesContext}. */
export interface SourceRoutesContext extends SourcesContext {
  adminToken: AdminToken
  authLimiter: AuthLimiter
}

/**
 * The admin API of sources and of the audit log (docs/relay.md, "Sources through the API"): list,
 * get, create or replace, delete, write-key rotation, and every change's audit entry.
 */
export function sourceRoutes(routesContext: SourceRoutesContext): Route[] {
  const context = { ...routesContext, store: new StoreCalls().watch(routesContext.store) }
  const authenticate = (req: IncomingMessage): TokenRole =>
    context.authLimiter.guard(req, 'admin API: token', () => context.adminToken.authenticate(req))
  const answer = (res: ServerResponse, { status, body, etag }: SourceAnswer) =>
    sendJson(res, status, body, etag === undefined ? {} : { etag })
  const routes: Route[] = [
    {
      method: 'GET',
      pattern: /^\/v1\/sources$/,
      handler: async (req, res) => {
        authenticate(req)
        sendJson(res, 200, await listSources(context))
      },
    },
    {
      method: 'GET',
      pattern: /^\/v1\/sources\/([^/]+)$/,
      handler: async (req, res, [name]) => {
        authenticate(req)
        answer(res, await getSource(context, sourceName(name!)))
      },
    },
    {
      method: 'PUT',
      pattern: /^\/v1\/sources\/([^/]+)$/,
      handler: async (req, res, [name]) => {
        const actor = authenticate(req)
        const body = await readJsonBody(req, MAX_SOURCE_BODY_BYTES)
        try {
          answer(res, await putSource(context, sourceName(name!), body, ifMatch(req), actor))
        } catch (error) {
          if (!(error instanceof SourceProblems)) throw error
          const { code, message, problems } = error
          sendJson(res, 400, { error: { code, message, problems } })
        }
      },
    },
    {
      method: 'DELETE',
      pattern: /^\/v1\/sources\/([^/]+)$/,
      handler: async (req, res, [name]) => {
        await deleteSource(context, sourceName(name!), ifMatch(req), authenticate(req))
        res.writeHead(204).end()
      },
    },
    {
      method: 'POST',
      pattern: /^\/v1\/sources\/([^/]+)\/write-keys$/,
      handler: async (req, res, [name]) => {
        const actor = authenticate(req)
        sendJson(res, 201, await addWriteKey(context, sourceName(name!), actor))
      },
    },
    {
      method: 'DELETE',
      pattern: /^\/v1\/sources\/([^/]+)\/write-keys\/([^/]+)$/,
      handler: async (req, res, [name, id]) => {
        const actor = authenticate(req)
        await deleteWriteKey(context, sourceName(name!), decoded(id!, 'write key id'), actor)
        res.writeHead(204).end()
      },
    },
    {
      method: 'GET',
      pattern: /^\/v1\/audit$/,
      handler: async (req, res, _params, url) => {
        authenticate(req)
        sendJson(res, 200, await handleAudit(context.store, url.searchParams))
      },
    },
  ]
  return routes.map((route) => ({ ...route, handler: answeringStoreOutage(route.handler) }))
}

function ifMatch(req: IncomingMessage): string | undefined {
  const header = req.headers['if-match']
  return Array.isArray(header) ? header.join(', ') : header
}

function sourceName(encoded: string): string {
  const name = decoded(encoded, 'source name')
  if (name.trim().length === 0 || name.length > 200)
    throw new HttpError(400, 'ERR_INVALID_SOURCE', 'the source name must be 1 to 200 characters')
  refuseNul('ERR_INVALID_SOURCE', 'the source name', name)
  return name
}

function decoded(encoded: string, what: string): string {
  try {
    return decodeURIComponent(encoded)
  } catch {
    throw new HttpError(400, 'ERR_INVALID_SOURCE', `the ${what} in the path is not valid percent-encoding`)
  }
}
