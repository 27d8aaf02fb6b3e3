import { limitsOf } from '../endpoint-limits'
import { endpointId } from '../../store/endpoints'
import { queryValues } from '../delivery-filter'
import { handlePause, handleResume } from '../endpoints'
import { retryFilter } from '../find'
import type { Route } from '../../http/route'
import { log } from '../../log'
import { endpointsPage } from './endpoints-view'
import { overviewLink } from './filter-form'
import type { ConsoleKit, PageContext } from './page-context'
import { redirect, refreshOf, sendHtml } from './respond'
import { replayPage } from '../../features/replay/replay-view'
import { checkSameOrigin, readForm } from './requests'
import { retryDeadLetters } from '../retry-dead-letters'

/** What the console's views share with the rest of the page (declared beside {@link PageContext}). */
export type { ConsoleKit }

const FORM: { kind: 'query'; code: string } = { kind: 'query', code: 'ERR_INVALID_BODY' }
const NOTICES: Record<string, string> = {
  paused: 'Paused: nothing goes there, from any relay, until it is resumed. Its deliveries wait.',
  resumed: 'Resumed: its waiting deliveries are attempted now.',
}

/**
 * The operator's console at failure time: the endpoints view with Pause / Resume, and "Retry all"
 * on a filtered list of dead letters, asked first with the count (`GET /ui/retry?…`), then done
 * with a CSRF-checked POST carrying the same filter.
 */
export function consoleRoutes(kit: ConsoleKit): Route[] {
  const { context, sessions, page, postedSession, showSignIn, now } = kit
  return [
    {
      method: 'GET',
      pattern: /^\/ui\/endpoints$/,
      handler: page(async (req, res, _params, url) => {
        const session = await sessions.find(req.headers.cookie)
        if (session === undefined) return showSignIn(res, url)
        const endpoints = [...context.webhooks].map(([webhook, routes]) => ({ url: webhook, routes }))
        const done = url.searchParams.get('done')
        sendHtml(
          res,
          200,
          endpointsPage({
            csrfToken: session.csrfToken,
            health: context.health.report(),
            endpoints: await context.store.endpoints({ endpoints, now: now() }),
            functions: context.functions?.recent(now()),
            limits: await limitsOf(
              context.store.endpointLimits,
              endpoints.map((e) => e.url),
              endpointId,
            ),
            notice: done === null ? undefined : NOTICES[done],
            refreshSeconds: refreshOf(url),
            now: now(),
          }),
        )
      }),
    },
    {
      method: 'POST',
      pattern: /^\/ui\/endpoints\/([A-Za-z0-9_-]{1,64})\/(pause|resume)$/,
      handler: page(async (req, res, [id, verb]) => {
        checkSameOrigin(req)
        await postedSession(req, await readForm(req))
        await (verb === 'pause' ? handlePause : handleResume)(context, id!, now())
        redirect(res, `/ui/endpoints?done=${verb === 'pause' ? 'paused' : 'resumed'}`)
      }),
    },
    {
      method: 'GET',
      pattern: /^\/ui\/retry$/,
      handler: page(async (req, res, _params, url) => {
        const session = await sessions.find(req.headers.cookie)
        if (session === undefined) return showSignIn(res, url)
        const values = queryValues(url.searchParams, 'ERR_INVALID_QUERY', { dropEmpty: true })
        const filter = retryFilter(context, values, { kind: 'query', code: 'ERR_INVALID_QUERY' })
        const { matched } = await retryDeadLetters(context, filter, { dryRun: true })
        sendHtml(
          res,
          200,
          replayPage({
            csrfToken: session.csrfToken,
            health: context.health.report(),
            filter: new Map([['status', 'failed'], ...values]),
            matched,
            back: overviewLink(new Map([['status', 'failed'], ...values])),
          }),
        )
      }),
    },
    {
      method: 'POST',
      pattern: /^\/ui\/retry$/,
      handler: page(async (req, res) => {
        checkSameOrigin(req)
        const form = await readForm(req)
        await postedSession(req, form)
        form.delete('csrf')
        const values = queryValues(form, FORM.code, { dropEmpty: true })
        const filter = retryFilter(context, values, FORM)
        const { matched, retried = 0 } = await retryDeadLetters(context, filter)
        log.info(`${retried} of ${matched} dead letters queued again from the operator page`, {
          event: 'retried-by-hand',
          count: retried,
        })
        if (retried > 0) context.wake()
        const { status: _status, ...kept } = Object.fromEntries(values)
        redirect(res, overviewLink(new Map(Object.entries(kept)), { retried: String(retried) }))
      }),
    },
  ]
}
