import { HttpError } from '../../../http/http-error'
import type { Route } from '../../../http/route'
import type { ConsoleKit } from '../../../console/page/operation-routes'
import { redirect, sendHtml } from '../../../console/page/respond'
import { checkSameOrigin, readForm } from '../../../console/page/requests'
import type { Session } from '../../../console/page/sessions'
import type { SuppressionRoutesContext } from '../routes'
import { MAX_SUPPRESSION_IDS, suppressionRequestOf } from '../suppression-request'
import { addSuppressions, listSuppressions, removeSuppression } from '../suppressions-api'
import { type SuppressionsPageView, suppressionsPage } from './suppressions-view'

// 5,000 ids of a few hundred characters each, form-encoded: as the API's body allows.
const MAX_FORM_BYTES = MAX_SUPPRESSION_IDS * 1000

/**
 * The operator page's suppressions (`/ui/suppressions`, docs/privacy.md "On the page"): the list,
 * and the admin API's own operations behind CSRF-checked POSTs, audited as the session's role.
 */
export function suppressionPageRoutes(kit: ConsoleKit, context: SuppressionRoutesContext): Route[] {
  const { sessions, page, postedSession, showSignIn, now } = kit
  const render = async (
    session: Session,
    from: number,
    extra: Pick<SuppressionsPageView, 'notice' | 'problem'>,
  ): Promise<SuppressionsPageView> => ({
    csrfToken: session.csrfToken,
    health: kit.context.health.report(),
    canChange: session.role !== 'read',
    suppressions: (await listSuppressions(context, undefined)).suppressions.toReversed(),
    from,
    sources: context.sourceNames(),
    now: now(),
    ...extra,
  })
  return [
    {
      method: 'GET',
      pattern: /^\/ui\/suppressions$/,
      handler: page(async (req, res, _params, url) => {
        const session = await sessions.find(req.headers.cookie)
        if (session === undefined) return showSignIn(res, url)
        sendHtml(res, 200, suppressionsPage(await render(session, fromOf(url), { notice: noticeOf(url) })))
      }),
    },
    {
      method: 'POST',
      pattern: /^\/ui\/suppressions$/,
      handler: page(async (req, res) => {
        checkSameOrigin(req)
        const form = await readForm(req, MAX_FORM_BYTES)
        const session = await postedSession(req, form)
        const text = form.get('userIds') ?? ''
        const source = form.get('source') ?? ''
        const erase = form.get('erase') === 'true'
        const userIds = text
          .split(/\r?\n/)
          .map((line) => line.trim())
          .filter((line) => line !== '')
        let request: ReturnType<typeof suppressionRequestOf>
        try {
          if (userIds.length === 0) throw new HttpError(400, 'ERR_INVALID_BODY', 'enter at least one user id.')
          if (userIds.length > MAX_SUPPRESSION_IDS) {
            const most = MAX_SUPPRESSION_IDS.toLocaleString('en')
            const got = userIds.length.toLocaleString('en')
            throw new HttpError(400, 'ERR_INVALID_BODY', `at most ${most} user ids at once, got ${got}.`)
          }
          const body = { userIds, erase, ...(source === '' ? {} : { source }) }
          request = suppressionRequestOf(body, context.sourceNames())
        } catch (error) {
          if (!(error instanceof HttpError) || error.status !== 400) throw error
          const problem = { message: error.message, userIds: text, source, erase }
          return sendHtml(res, 400, suppressionsPage(await render(session, 0, { notice: undefined, problem })))
        }
        const { added, erased } = await addSuppressions(context, request, session.role)
        redirect(res, `/ui/suppressions?added=${added}${erased === undefined ? '' : `&erased=${erased}`}`)
      }),
    },
    {
      method: 'POST',
      pattern: /^\/ui\/suppressions\/lift$/,
      handler: page(async (req, res) => {
        checkSameOrigin(req)
        const form = await readForm(req)
        const session = await postedSession(req, form)
        const userId = form.get('userId') ?? ''
        if (userId === '') throw new HttpError(400, 'ERR_INVALID_BODY', 'the form names no user id')
        const source = form.get('source') || undefined
        const { removed } = await removeSuppression(context, userId, source, session.role)
        redirect(res, `/ui/suppressions?lifted=${removed}`)
      }),
    },
  ]
}

function fromOf(url: URL): number {
  const from = Number(url.searchParams.get('from') ?? '0')
  return Number.isSafeInteger(from) && from >= 0 ? from : 0
}

// What the last POST did, from the redirect's query: counts only, so nothing of the URL is echoed.
function noticeOf(url: URL): string | undefined {
  const count = (name: string): number | undefined => {
    const value = url.searchParams.get(name)
    const n = Number(value)
    return value !== null && Number.isSafeInteger(n) && n >= 0 ? n : undefined
  }
  const added = count('added')
  const erased = count('erased')
  const lifted = count('lifted')
  if (added !== undefined) {
    const also =
      erased === undefined ? '' : ` ${erased} erased: their stored messages and a delete sent to each destination.`
    return `Suppressed: ${added} newly (the others already were). Every relay on this store drops their messages within seconds.${also}`
  }
  if (lifted !== undefined)
    return `Lifted: ${lifted} suppression${lifted === 1 ? '' : 's'}. Their messages are taken in again.`
  return undefined
}
