import { readOnly } from '../../http/auth'
import { HttpError } from '../../http/http-error'
import type { Route } from '../../http/route'
import { log } from '../../log'
import type { ReplayAction } from '../../store/replays'
import { queryValues } from '../../console/delivery-filter'
import { STORE_ID_PATTERN } from '../../store/store-id'
import { handleChangeReplay, handleStartReplay, readReplayRequest } from './replays-api'
import type { ConsoleKit } from '../../console/page/operation-routes'
import { COUNTED_PARAM, REPLAY_FORM_FIELDS, replaysPage, replayStartPage } from './replays-view'
import { redirect, refreshOf, sendHtml } from '../../console/page/respond'
import { checkSameOrigin, readForm } from '../../console/page/requests'

const NOTICES: Record<string, string> = {
  pause: 'Paused: no relay makes or sends its deliveries until it is resumed.',
  resume: 'Resumed.',
  cancel: 'Cancelled: it makes no more deliveries, and those not yet sent are settled unsent.',
}

/**
 * The operator page's replays (docs/replay.md): started from a delivery filter, counted first
 * (`GET /ui/replays/new?…`, a dry run), then confirmed by a CSRF-checked POST carrying the same
 * values; the list with each one's progress, and pause, resume and cancel.
 */
export function replayPageRoutes(kit: ConsoleKit): Route[] {
  const { context, sessions, page, postedSession, showSignIn, now } = kit
  // The form's values as the admin API's body: the filter's fields, `to` (one URL) and `rate`.
  const bodyOf = (values: ReadonlyMap<string, string>, dryRun: boolean): Record<string, unknown> => {
    const filter = Object.fromEntries(
      [...values].filter(([key]) => !(REPLAY_FORM_FIELDS as readonly string[]).includes(key)),
    )
    const to = values.get('to')
    const rate = values.get('rate')
    return {
      filter,
      dryRun,
      ...(to === undefined ? {} : { to: { url: to } }),
      ...(rate === undefined ? {} : { ratePerSecond: Number(rate) }),
    }
  }
  return [
    {
      method: 'GET',
      pattern: /^\/ui\/replays$/,
      handler: page(async (req, res, _params, url) => {
        const session = await sessions.find(req.headers.cookie)
        if (session === undefined) return showSignIn(res, url)
        const done = url.searchParams.get('done')
        const started = url.searchParams.get('started')
        sendHtml(
          res,
          200,
          replaysPage({
            csrfToken: session.csrfToken,
            health: context.health.report(),
            replays: await context.store.replays.list(),
            notice: started !== null ? `Replay ${started} started.` : done === null ? undefined : NOTICES[done],
            refreshSeconds: refreshOf(url),
            now: now(),
          }),
        )
      }),
    },
    {
      method: 'GET',
      pattern: /^\/ui\/replays\/new$/,
      handler: page(async (req, res, _params, url) => {
        const session = await sessions.find(req.headers.cookie)
        if (session === undefined) return showSignIn(res, url)
        // The read token could count but never start: its session is refused the form itself.
        if (session.role === 'read') throw readOnly()
        const submitted = url.searchParams.has(COUNTED_PARAM)
        url.searchParams.delete(COUNTED_PARAM)
        const values = queryValues(url.searchParams, 'ERR_INVALID_QUERY', { dropEmpty: true })
        let count: { matched: number } | { problem: string } | undefined
        try {
          const request = readReplayRequest(context, bodyOf(values, true))
          count = { matched: await context.store.replays.count(request.filter) }
        } catch (error) {
          if (!(error instanceof HttpError) || error.status !== 400) throw error
          // Opened from "Replay these…", the window is not given yet: ask, do not scold.
          count = submitted ? { problem: error.message } : undefined
        }
        const source = values.get('source')
        const urls = [...context.webhooks]
          .filter(([, routes]) => routes.some((r) => r.source === source))
          .map(([webhook]) => webhook)
        sendHtml(
          res,
          200,
          replayStartPage({ csrfToken: session.csrfToken, health: context.health.report(), values, urls, count }),
        )
      }),
    },
    {
      method: 'POST',
      pattern: /^\/ui\/replays$/,
      handler: page(async (req, res) => {
        checkSameOrigin(req)
        const form = await readForm(req)
        await postedSession(req, form)
        form.delete('csrf')
        const started = await handleStartReplay(
          context,
          bodyOf(queryValues(form, 'ERR_INVALID_BODY', { dropEmpty: true }), false),
        )
        log.info(`replay ${started.body.id} of ${started.body.matched} deliveries started from the operator page`, {
          event: 'replay-started',
          replayId: started.body.id,
          matched: started.body.matched,
        })
        redirect(res, `/ui/replays?started=${started.body.id}`)
      }),
    },
    {
      method: 'POST',
      pattern: new RegExp(`^/ui/replays/(${STORE_ID_PATTERN})/(pause|resume|cancel)$`),
      handler: page(async (req, res, [id, action]) => {
        checkSameOrigin(req)
        await postedSession(req, await readForm(req))
        await handleChangeReplay(context, id!, action as ReplayAction)
        redirect(res, `/ui/replays?done=${action}`)
      }),
    },
  ]
}
