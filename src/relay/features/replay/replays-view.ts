import type { HealthReport } from '../../events/readings'
import type { ReplayRecord } from '../../store/replays'
import { redactUrl } from '../../../shared/redact-url'
import { type Html, html } from '../../console/page/html'
import { layout, when } from '../../console/page/layout'
import { isReadOnlyPage } from '../../console/page/sessions'

/** The page's replay form fields besides the delivery filter's: the one URL, and the pace. */
export const REPLAY_FORM_FIELDS = ['to', 'rate'] as const

/** The count form's mark that it was submitted: before it, a missing field is no error yet. */
export const COUNTED_PARAM = 'counted'

/** `/ui/replays/new?…`: a replay of a delivery filter, counted first. */
export interface ReplayStartView {
  csrfToken: string
  health: HealthReport
  /** The form's values as the user wrote them (filter fields, `to`, `rate`). */
  values: ReadonlyMap<string, string>
  /** The source's Webhooks URLs to choose `to` from (as configured; shown without their query). */
  urls: readonly string[]
  /**
   * What the dry run counted, or why the request cannot start (since and until missing, say);
   * `undefined` when it cannot start but the form was not submitted yet.
   */
  count: { matched: number } | { problem: string } | undefined
}

/** The confirmation: the window and target to edit (a GET form), then "Replay N" (a POST with the same values). */
export function replayStartPage(view: ReplayStartView): Html {
  const value = (key: string) => view.values.get(key) ?? ''
  const filter = [...view.values].filter(([key]) => !['since', 'until', ...REPLAY_FORM_FIELDS].includes(key))
  const input = (key: string, label: string, placeholder: string) =>
    html`<label>${label} <input type="text" name="${key}" value="${value(key)}" placeholder="${placeholder}"></label>`
  return layout(
    'Replay deliveries',
    html`<main>
<p><a href="/ui/replays">← Replays</a></p>
<h1>Replay deliveries</h1>
<p>New deliveries of the stored messages matching ${
      filter.length === 0
        ? html`<strong>every source</strong>`
        : filter.map(([key, v], i) => html`${i > 0 && ', '}<span class="mono">${key}</span> = <strong>${v}</strong>`)
    }, received in the window below, sent through today's settings and function, with their original message ids.</p>
<form class="filters" method="get" action="/ui/replays/new">
  ${filter.map(([key, v]) => html`<input type="hidden" name="${key}" value="${v}">`)}
  ${input('since', 'Since', '7d or 2026-11-24T09:00:00Z')}
  ${input('until', 'Until', 'ISO 8601 or epoch ms')}
  <label>To <select name="to">
    <option value="">every URL of the destination</option>
    ${view.urls.map((u) => html`<option value="${u}"${value('to') === u ? html` selected` : ''}>${redactUrl(u)}</option>`)}
  </select></label>
  ${input('rate', 'Per second', '100')}
  <input type="hidden" name="${COUNTED_PARAM}" value="1">
  <button type="submit" class="secondary">Count</button>
</form>
${
  view.count === undefined
    ? ''
    : 'problem' in view.count
      ? html`<p class="error" role="alert">${view.count.problem}</p>`
      : view.count.matched === 0
        ? html`<p class="muted">Nothing matches: nothing to replay.</p>`
        : html`<form method="post" action="/ui/replays">
  <input type="hidden" name="csrf" value="${view.csrfToken}">
  ${[...view.values].map(([key, v]) => html`<input type="hidden" name="${key}" value="${v}">`)}
  <button type="submit">Replay ${view.count.matched} ${view.count.matched === 1 ? 'delivery' : 'deliveries'}</button>
  <a href="/ui/replays">Cancel</a>
</form>`
}
</main>`,
    view,
  )
}

/** `/ui/replays`: every replay with its progress, newest first. */
export interface ReplaysView {
  csrfToken: string
  health: HealthReport
  replays: readonly ReplayRecord[]
  notice: string | undefined
  refreshSeconds: number | undefined
  now: number
}

/** The replays, each with Pause or Resume, and Cancel while it may still make deliveries. */
export function replaysPage(view: ReplaysView): Html {
  return layout(
    'Replays',
    html`<main>
<p><a href="/">← Overview</a></p>
<h1>Replays</h1>
${view.notice !== undefined && html`<p class="notice" role="status">${view.notice}</p>`}
${!isReadOnlyPage(view.csrfToken) && html`<p class="muted">Start one from the overview's filter ("Replay these…").</p>`}
<p class="muted">Counts go on until every delivery made has settled.</p>
${
  view.replays.length === 0
    ? html`<p class="muted">No replay yet.</p>`
    : html`<table class="replays">
  <thead><tr><th>#</th><th>Started</th><th>Filter</th><th>To</th><th>State</th><th class="num">Matched</th><th class="num">Queued</th><th class="num">Delivered</th><th class="num">Failed</th><th></th></tr></thead>
  <tbody>${view.replays.map((r) => replayRow(r, view))}</tbody>
</table>`
}
</main>`,
    view,
  )
}

function replayRow(replay: ReplayRecord, view: ReplaysView): Html {
  const { routes: _routes, ...filter } = replay.filter
  const shown = Object.entries(filter).map(([key, v]) =>
    key === 'since' || key === 'until' ? `${key} ${new Date(v as number).toISOString()}` : `${key} = ${String(v)}`,
  )
  const action = (verb: 'pause' | 'resume' | 'cancel', label: string) =>
    html`<form method="post" action="/ui/replays/${replay.id}/${verb}" class="inline">
    <input type="hidden" name="csrf" value="${view.csrfToken}">
    <button type="submit"${verb === 'resume' ? '' : html` class="secondary"`} aria-label="${label} replay ${replay.id}">${label}</button>
  </form>`
  return html`<tr>
    <td>${replay.id}</td>
    <td>${when(new Date(replay.createdAt).toISOString(), view.now)}</td>
    <td class="mono">${shown.join(', ')}</td>
    <td class="mono">${replay.url === undefined ? 'every URL' : redactUrl(replay.url)}</td>
    <td><span class="circuit ${replay.state}">${replay.state}</span> <span class="muted">${replay.ratePerSecond}/s</span></td>
    <td class="num">${replay.matched}</td>
    <td class="num">${replay.queued}</td>
    <td class="num">${replay.delivered}</td>
    <td class="num">${replay.failed}</td>
    <td>${replay.state === 'running' && action('pause', 'Pause')}${replay.state === 'paused' && action('resume', 'Resume')}${
      (replay.state === 'running' || replay.state === 'paused') && action('cancel', 'Cancel')
    }</td>
  </tr>`
}
