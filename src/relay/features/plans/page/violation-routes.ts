import { HttpError } from '../../../http/http-error'
import type { Route } from '../../../http/route'
import { queryValues } from '../../../console/delivery-filter'
import type { ConsoleKit } from '../../../console/page/operation-routes'
import { sendHtml } from '../../../console/page/respond'
import { violationsPage } from './violations-view'

// The counts cover this long; Prometheus and GET /v1/violations keep the rest.
const WINDOW_HOURS = 24
// Examples shown under the counts.
const NEWEST = 50

/** The operator page's violations view (`/ui/violations?source&event`): tracking plans at a glance. */
export function violationRoutes(kit: ConsoleKit): Route[] {
  const { context, sessions, page, showSignIn, now } = kit
  return [
    {
      method: 'GET',
      pattern: /^\/ui\/violations$/,
      handler: page(async (req, res, _params, url) => {
        const session = await sessions.find(req.headers.cookie)
        if (session === undefined) return showSignIn(res, url)
        const values = queryValues(url.searchParams, 'ERR_INVALID_QUERY', { dropEmpty: true })
        for (const key of values.keys()) {
          if (key !== 'source' && key !== 'event')
            throw new HttpError(
              400,
              'ERR_INVALID_QUERY',
              `unknown parameter ${JSON.stringify(key)}; allowed: source, event`,
            )
        }
        const source = values.get('source')
        const event = values.get('event')
        const at = now()
        const [counts, newest] = await Promise.all([
          context.store.violations.counts(at - WINDOW_HOURS * 3_600_000),
          context.store.violations.find({ source, event, limit: NEWEST }),
        ])
        sendHtml(
          res,
          200,
          violationsPage({
            csrfToken: session.csrfToken,
            health: context.health.report(),
            counts,
            windowHours: WINDOW_HOURS,
            newest: newest.violations,
            source,
            event,
            now: at,
          }),
        )
      }),
    },
  ]
}
