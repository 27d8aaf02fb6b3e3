import type { SourceView } from '../../../sources/api-source-codec'
import { HttpError } from '../../../http/http-error'
import type { Route } from '../../../http/route'
import {
  type SourcesContext,
  addWriteKey,
  deleteWriteKey,
  listSources,
  putSource,
  SourceProblems,
} from '../sources-api'
import type { ConsoleKit } from '../../../console/page/operation-routes'
import { redirect, sendHtml } from '../../../console/page/respond'
import { checkSameOrigin, readForm } from '../../../console/page/requests'
import { sourcesPage } from './sources-view'

const NOTICES: Record<string, string> = {
  enabled: 'Enabled: its messages are accepted again.',
  disabled: 'Disabled: its messages are refused (403); deliveries already accepted go on.',
  added: 'Webhook URL added: every relay on the store sends there within seconds.',
  removed: 'Webhook URL removed.',
  'key-deleted': 'Write key deleted: it is refused from now on.',
}

/**
 * The sources view of the operator page (`/ui/sources`) and its actions on API sources, each a
 * CSRF-checked POST carrying the `ETag` it was shown (a change made meanwhile is refused, 412).
 */
export function sourcePageRoutes(kit: ConsoleKit, sources: SourcesContext): Route[] {
  const { context, sessions, page, postedSession, showSignIn } = kit
  // A form's change to one API source: its view as listed, edited, written back with "***" kept.
  type Editable = Pick<SourceView, 'enabled' | 'destinations' | 'schema'>
  const change = async (name: string, form: URLSearchParams, edit: (body: Editable) => Editable) => {
    const listed = (await listSources(sources)).sources.find((s) => s.name === name)
    if (listed === undefined) throw new HttpError(404, 'ERR_NOT_FOUND', `there is no source ${JSON.stringify(name)}`)
    const { name: _name, provisioned: _provisioned, writeKeys: _keys, etag: _etag, ...body } = listed
    try {
      await putSource(sources, name, { ...edit(body) }, form.get('etag') ?? undefined, 'admin')
    } catch (error) {
      if (error instanceof SourceProblems) throw new HttpError(400, error.code, error.message)
      throw error
    }
  }
  const posted = (action: string, handle: (name: string, form: URLSearchParams) => Promise<string>): Route => ({
    method: 'POST',
    pattern: new RegExp(`^/ui/sources/([^/]+)/${action}$`),
    handler: page(async (req, res, [encoded]) => {
      checkSameOrigin(req)
      const form = await readForm(req)
      await postedSession(req, form)
      redirect(res, `/ui/sources?done=${await handle(nameOf(encoded!), form)}`)
    }),
  })
  return [
    {
      method: 'GET',
      pattern: /^\/ui\/sources$/,
      handler: page(async (req, res, _params, url) => {
        const session = await sessions.find(req.headers.cookie)
        if (session === undefined) return showSignIn(res, url)
        const done = url.searchParams.get('done')
        sendHtml(
          res,
          200,
          sourcesPage({
            csrfToken: session.csrfToken,
            health: context.health.report(),
            sources: (await listSources(sources)).sources,
            notice: done === null ? undefined : NOTICES[done],
          }),
        )
      }),
    },
    posted('enabled', async (name, form) => {
      const enabled = form.get('enabled') === 'true'
      await change(name, form, (body) => ({ ...body, enabled }))
      return enabled ? 'enabled' : 'disabled'
    }),
    posted('webhooks/add', async (name, form) => {
      await change(name, form, (body) => {
        const settings = body.destinations.Webhooks ?? { webhooks: [] }
        const webhooks = [...settings.webhooks, { url: form.get('url') ?? '' }]
        return { ...body, destinations: { ...body.destinations, Webhooks: { ...settings, webhooks } } }
      })
      return 'added'
    }),
    posted('webhooks/remove', async (name, form) => {
      const index = Number(form.get('index'))
      await change(name, form, (body) => {
        const settings = body.destinations.Webhooks ?? { webhooks: [] }
        const webhooks = settings.webhooks.filter((_entry, i) => i !== index)
        return { ...body, destinations: { ...body.destinations, Webhooks: { ...settings, webhooks } } }
      })
      return 'removed'
    }),
    posted('write-keys/delete', async (name, form) => {
      await deleteWriteKey(sources, name, form.get('id') ?? '', 'admin')
      return 'key-deleted'
    }),
    {
      // The new key is shown on the answer to this POST, once: never in a URL, never stored in clear.
      method: 'POST',
      pattern: /^\/ui\/sources\/([^/]+)\/write-keys\/add$/,
      handler: page(async (req, res, [encoded]) => {
        checkSameOrigin(req)
        const form = await readForm(req)
        const session = await postedSession(req, form)
        const name = nameOf(encoded!)
        const { writeKey } = await addWriteKey(sources, name, 'admin')
        sendHtml(
          res,
          201,
          sourcesPage({
            csrfToken: session.csrfToken,
            health: context.health.report(),
            sources: (await listSources(sources)).sources,
            notice: undefined,
            newKey: { source: name, writeKey },
          }),
          { 'cache-control': 'no-store' },
        )
      }),
    },
  ]
}

function nameOf(encoded: string): string {
  try {
    return decodeURIComponent(encoded)
  } catch {
    throw new HttpError(400, 'ERR_INVALID_SOURCE', 'the source name in the path is not valid percent-encoding')
  }
}
