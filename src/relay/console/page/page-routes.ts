import type { IncomingMessage, ServerResponse } from 'node:http'
import { handleRetry } from '../operations'
import { HttpError } from '../../http/http-error'
import { readOnly } from '../../http/auth'
import type { Handler, Route } from '../../http/route'
import { log } from '../../log'
import type { Html } from './html'
import { localPath } from './local-path'
import type { PageContext } from './page-context'
import { redirect, refreshOf, SECURITY_HEADERS, sendHtml } from './respond'
import { checkSameOrigin, isSecure, readForm } from './requests'
import { isCsrfToken, SESSION_COOKIE, SESSION_MAX_MS, type Session, Sessions } from './sessions'
import { PAGE_CSS } from './style'
import { logStoreUnavailable, StoreCalls, StoreUnavailableError } from '../store-unavailable'
import { type ConsoleKit, consoleRoutes } from './operation-routes'
import { outagePage } from './outage-view'
import { readOverview } from './overview'
import type { EndpointView } from '../../store/endpoints'
import type { DeliveryView } from '../../store/store'
import { dashboardPage, deliveryPage, errorPage, signInPage } from './views'
import { withProbeTimes } from '../probe-times'
import { withOrderWait } from '../order-wait'
import { STORE_ID_PATTERN } from '../../store/store-id'

/** The operator page's routes, and the kit a feature builds its own section of the page with. */
export interface OperatorPage {
  readonly routes: Route[]
  /** Sessions, sign-in, refusals shown as pages: what every section of the page shares. */
  readonly kit: ConsoleKit
}

/**
 * The operator page (`GET /`), server-rendered HTML with no script: the outbox and rates at a
 * glance, recent deliveries by status and source, one delivery's attempts, and a retry button for
 * dead letters. Signed in with the admin token, which sets an HttpOnly, SameSite=Strict session
 * cookie; every POST needs the session's CSRF token and a same-origin `Origin`.
 */
export function operatorPage(pageContext: PageContext): OperatorPage {
  const now = pageContext.now ?? Date.now
  // Every store call of the page: a failure of the store itself shows the outage page.
  const storeCalls = new StoreCalls(now)
  const context = { ...pageContext, store: storeCalls.watch(pageContext.store) }
  const sessions = new Sessions(context.store.sessions, now)

  // Renders an HttpError as a page, not JSON: the reader is a person.
  const page =
    (handler: Handler): Handler =>
    async (req, res, params, url) => {
      try {
        await handler(req, res, params, url)
      } catch (error) {
        if (error instanceof StoreUnavailableError && !res.headersSent) {
          logStoreUnavailable(req.method, url.pathname, error)
          const session = await sessions.find(req.headers.cookie).catch(() => undefined)
          if (session !== undefined) return sendHtml(res, 503, outage(session.csrfToken, error.reason, url))
        }
        if (!(error instanceof HttpError) || res.headersSent) throw error
        log.debug(`${req.method} ${url.pathname} → ${error.status} ${error.code}`, {
          event: 'request-refused',
          status: error.status,
          code: error.code,
        })
        sendHtml(
          res,
          error.status,
          errorPage(
            error.status,
            error.message,
            (await sessions.find(req.headers.cookie).catch(() => undefined)) !== undefined,
          ),
          // The error's own headers that still hold for a page: a 429's Retry-After, a cut connection.
          pick(error.headers, ['connection', 'retry-after']),
        )
      }
    }

  const outage = (csrfToken: string, reason: string, url: URL): Html => {
    const health = context.health.report()
    const failingSince = health.ok ? [] : health.failing.map((f) => Date.parse(f.since))
    return outagePage({
      csrfToken,
      reason,
      health,
      lastHealthy: failingSince.length > 0 ? Math.min(...failingSince) : storeCalls.lastAnswered,
      refreshSeconds: refreshOf(url),
      now: now(),
    })
  }

  // The session of a request that may end it (sign-out), checked for origin and CSRF token.
  const formSession = async (req: IncomingMessage, form: URLSearchParams): Promise<Session> => {
    const session = await sessions.find(req.headers.cookie)
    if (session === undefined) throw new HttpError(401, 'ERR_UNAUTHORIZED', 'your session has ended: sign in again')
    if (!isCsrfToken(session, form.get('csrf')))
      throw new HttpError(
        403,
        'ERR_FORBIDDEN',
        'the form is stale or did not come from this page: reload and try again',
      )
    return session
  }
  // The session of a state-changing request: the read token's changes nothing.
  const postedSession = async (req: IncomingMessage, form: URLSearchParams): Promise<Session> => {
    const session = await formSession(req, form)
    if (session.role === 'read') throw readOnly()
    return session
  }

  const showSignIn = (res: ServerResponse, url: URL, status = 200, error?: string): void =>
    sendHtml(
      res,
      status,
      signInPage({ open: context.adminToken.configured, error, next: localPath(url.pathname + url.search) }),
    )

  const kit: ConsoleKit = { context, sessions, page, postedSession, showSignIn, now }
  const routes: Route[] = [
    {
      method: 'GET',
      pattern: /^\/$/,
      handler: page(async (req, res, _params, url) => {
        const session = await sessions.find(req.headers.cookie)
        if (session === undefined) return showSignIn(res, url)
        const overview = await readOverview(context, url.searchParams, now())
        const retried = overview.query.get('retried')
        sendHtml(
          res,
          200,
          dashboardPage({
            csrfToken: session.csrfToken,
            health: context.health.report(),
            sources: context.sources.map((s) => s.name),
            backlog: overview.backlog,
            rates: await context.metrics.recentRates(),
            lastHour: await context.metrics.lastHour(),
            troubled: overview.troubled,
            query: overview.query,
            urls: overview.urls,
            deliveries: overview.page.deliveries,
            next: overview.page.next,
            retryAll: overview.retryAll,
            notice:
              retried === undefined
                ? undefined
                : `Queued again: ${retried} dead letters, attempted now with a fresh retry window.`,
            refreshSeconds: refreshOf(url),
            now: now(),
          }),
        )
      }),
    },
    {
      // The deliveries are listed (and filtered) on the overview: a link or a guess at this path
      // lands there, with its filter, rather than on the API's JSON 404.
      method: 'GET',
      pattern: /^\/ui\/deliveries\/?$/,
      handler: page(async (_req, res, _params, url) => redirect(res, `/${url.search}`)),
    },
    {
      method: 'GET',
      pattern: new RegExp(`^/ui/deliveries/(${STORE_ID_PATTERN})$`),
      handler: page(async (req, res, [id], url) => {
        const session = await sessions.find(req.headers.cookie)
        if (session === undefined) return showSignIn(res, url)
        const found = await context.store.get(Number(id))
        if (found === undefined) throw new HttpError(404, 'ERR_NOT_FOUND', `there is no delivery ${id}`)
        const delivery = (await withProbeTimes(context, [await withOrderWait(context.store, found)]))[0]!
        sendHtml(
          res,
          200,
          deliveryPage({
            csrfToken: session.csrfToken,
            health: context.health.report(),
            delivery,
            endpoints: await endpointsOf(context, delivery, now()),
            notice: url.searchParams.has('retried')
              ? 'Queued again: it is attempted now, with a fresh retry window.'
              : undefined,
            now: now(),
          }),
        )
      }),
    },
    {
      method: 'POST',
      pattern: new RegExp(`^/ui/deliveries/(${STORE_ID_PATTERN})/retry$`),
      handler: page(async (req, res, [id]) => {
        checkSameOrigin(req)
        await postedSession(req, await readForm(req))
        await handleRetry(context, id!)
        log.info(`delivery ${id} queued again from the operator page`, {
          event: 'retried-by-hand',
          deliveryId: Number(id),
        })
        redirect(res, `/ui/deliveries/${id}?retried`)
      }),
    },
    {
      method: 'POST',
      pattern: /^\/ui\/sign-in$/,
      handler: page(async (req, res, _params, url) => {
        checkSameOrigin(req)
        const form = await readForm(req)
        const token = form.get('token') ?? ''
        context.authLimiter.refuseIfLimited(req, 'operator page: sign-in')
        const role = context.adminToken.roleOf(token)
        if (role === undefined) {
          // Logged by the limiter: one line per address, however many guesses.
          context.authLimiter.failed(req, 'operator page: sign-in')
          const refusal = context.adminToken.readable
            ? 'That is neither the admin token nor the read token.'
            : 'That is not the admin token.'
          return showSignIn(res, url, 401, context.adminToken.configured ? refusal : undefined)
        }
        const { id } = await sessions.create(role)
        log.info(`operator page: signed in with the ${role} token from ${req.socket.remoteAddress}`, {
          event: 'signed-in',
          role,
          client: req.socket.remoteAddress,
        })
        redirect(res, localPath(form.get('next') ?? '/'), {
          'set-cookie': cookie(id, SESSION_MAX_MS / 1000, isSecure(req)),
        })
      }),
    },
    {
      method: 'POST',
      pattern: /^\/ui\/sign-out$/,
      handler: page(async (req, res) => {
        checkSameOrigin(req)
        await formSession(req, await readForm(req))
        await sessions.end(req.headers.cookie)
        redirect(res, '/', { 'set-cookie': cookie('', 0, isSecure(req)) })
      }),
    },
    ...consoleRoutes(kit),
    {
      method: 'GET',
      pattern: /^\/ui\/page\.css$/,
      handler: async (_req, res) => {
        res.writeHead(200, {
          ...SECURITY_HEADERS,
          'content-type': 'text/css; charset=utf-8',
          'content-length': Buffer.byteLength(PAGE_CSS),
          'cache-control': 'max-age=300',
        })
        res.end(PAGE_CSS)
      },
    },
  ]
  return { routes, kit }
}

function cookie(value: string, maxAgeSeconds: number, secure: boolean): string {
  return `${SESSION_COOKIE}=${value}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${maxAgeSeconds}${secure ? '; Secure' : ''}`
}

// The endpoints a delivery goes to: the URLs its source's destination sends to.
async function endpointsOf(context: PageContext, delivery: DeliveryView, now: number): Promise<EndpointView[]> {
  const endpoints = [...context.webhooks]
    .filter(([, routes]) => routes.some((r) => r.source === delivery.source && r.destination === delivery.destination))
    .map(([url, routes]) => ({ url, routes }))
  return endpoints.length === 0 ? [] : context.store.endpoints({ endpoints, now })
}

function pick(headers: Readonly<Record<string, string>>, names: readonly string[]): Record<string, string> {
  return Object.fromEntries(names.flatMap((name) => (headers[name] === undefined ? [] : [[name, headers[name]]])))
}
