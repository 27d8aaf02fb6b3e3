import type { Route } from '../../../http/route'
import { LIVE_SCRIPT } from './live-script'
import { LIVE_CSP, livePage } from './live-view'
import type { ConsoleKit } from '../../../console/page/operation-routes'
import { SECURITY_HEADERS, sendHtml } from '../../../console/page/respond'

/**
 * The live view: `GET /ui/live` (signed in) and its script, `GET /ui/live.js`. The page reads
 * `GET /v1/stream` with its session (docs/operations.md, "The live view").
 */
export function liveRoutes(kit: Pick<ConsoleKit, 'context' | 'sessions' | 'page' | 'showSignIn'>): Route[] {
  const { context, sessions, page, showSignIn } = kit
  return [
    {
      method: 'GET',
      pattern: /^\/ui\/live$/,
      handler: page(async (req, res, _params, url) => {
        const session = await sessions.find(req.headers.cookie)
        if (session === undefined) return showSignIn(res, url)
        const view = {
          csrfToken: session.csrfToken,
          health: context.health.report(),
          sources: context.sources.map((s) => s.name),
        }
        sendHtml(res, 200, livePage(view), { 'content-security-policy': LIVE_CSP })
      }),
    },
    {
      method: 'GET',
      pattern: /^\/ui\/live\.js$/,
      handler: async (_req, res) => {
        res.writeHead(200, {
          ...SECURITY_HEADERS,
          'content-type': 'text/javascript; charset=utf-8',
          'content-length': Buffer.byteLength(LIVE_SCRIPT),
          'cache-control': 'max-age=300',
        })
        res.end(LIVE_SCRIPT)
      },
    },
  ]
}
