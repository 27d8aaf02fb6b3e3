import type { HealthReport } from '../../../events/readings'
import { type Html, html } from '../../../console/page/html'
import { layout, when } from '../../../console/page/layout'
import { LIFT_EVERY_SOURCE, MAX_SUPPRESSION_IDS } from '../suppression-request'
import type { SuppressionView } from '../suppressions-api'

/** How many suppressions one view of `/ui/suppressions` lists; older ones are on the next. */
export const SUPPRESSIONS_PAGE_SIZE = 100

/** What the suppressions view shows. */
export interface SuppressionsPageView {
  csrfToken: string
  health: HealthReport
  /** Whether the session may change anything (the read token's may not: no form is shown). */
  canChange: boolean
  /** Every suppression, newest first; the view shows {@link SUPPRESSIONS_PAGE_SIZE} from `from`. */
  suppressions: readonly SuppressionView[]
  from: number
  /** The configured sources, for the form's scope. */
  sources: readonly string[]
  notice: string | undefined
  /** Why the form was refused, with what it held, shown again. */
  problem?: { message: string; userIds: string; source: string; erase: boolean } | undefined
  now: number
}

/**
 * `/ui/suppressions` (docs/privacy.md, "On the page"): the suppressed users, newest first, each
 * with its scope, when it was made and a "Lift" button; a form to suppress more (and, ticked,
 * erase them). The read token's session sees the list only.
 */
export function suppressionsPage(view: SuppressionsPageView): Html {
  const total = view.suppressions.length
  const shown = view.suppressions.slice(view.from, view.from + SUPPRESSIONS_PAGE_SIZE)
  const last = view.from + shown.length
  const older = last < total ? view.from + SUPPRESSIONS_PAGE_SIZE : undefined
  const newer = view.from > 0 ? Math.max(0, view.from - SUPPRESSIONS_PAGE_SIZE) : undefined
  return layout(
    'Suppressions',
    html`<main>
<p><a href="/">← Overview</a></p>
${view.notice !== undefined && html`<p class="notice" role="status">${view.notice}</p>`}
${view.problem !== undefined && html`<p class="notice bad" role="alert" id="suppression-problem">Nothing was changed: ${view.problem.message}</p>`}
<h1>Suppressions</h1>
<p class="muted">A suppressed user's messages are acknowledged and dropped at ingest, on every relay of this store within seconds: of one source, or of every source.</p>
${view.canChange && addForm(view)}
<h2>Suppressed users</h2>
${
  total === 0
    ? html`<p class="muted" id="suppressions-none">No user is suppressed.</p>`
    : html`<p class="muted" id="suppressions-count">Showing ${view.from + 1}–${last} of ${total}, newest first (${SUPPRESSIONS_PAGE_SIZE} a page).</p>
<table id="suppressions">
<thead><tr><th>User id</th><th>Source</th><th>Suppressed</th>${view.canChange && html`<th></th>`}</tr></thead>
<tbody>${shown.map((s) => row(s, view))}</tbody>
</table>
<p>${newer !== undefined && html`<a href="/ui/suppressions?from=${newer}">← Newer</a> `}${
        older !== undefined && html`<a href="/ui/suppressions?from=${older}">Older →</a>`
      }</p>`
}
</main>`,
    view,
  )
}

function row(s: SuppressionView, view: SuppressionsPageView): Html {
  const scope = s.source === undefined ? html`<span class="muted">every source</span>` : s.source
  return html`<tr data-user="${s.userId}"><td class="mono">${s.userId}</td><td>${scope}</td><td>${when(s.at, view.now)}</td>${
    view.canChange &&
    html`<td><form method="post" action="/ui/suppressions/lift" class="inline">
  <input type="hidden" name="csrf" value="${view.csrfToken}">
  <input type="hidden" name="userId" value="${s.userId}">
  <input type="hidden" name="source" value="${s.source ?? LIFT_EVERY_SOURCE}">
  <button type="submit" class="secondary">Lift</button>
</form></td>`
  }</tr>`
}

function addForm(view: SuppressionsPageView): Html {
  const kept = view.problem
  return html`<form method="post" action="/ui/suppressions" id="suppress-form">
<input type="hidden" name="csrf" value="${view.csrfToken}">
<label>User ids, one per line (1 to ${MAX_SUPPRESSION_IDS.toLocaleString('en')})
<textarea name="userIds" rows="6" cols="60" required>${kept?.userIds ?? ''}</textarea></label>
<label>Source
<select name="source"><option value="">every source</option>${view.sources.map(
    (name) => html`<option value="${name}"${kept?.source === name && html` selected`}>${name}</option>`,
  )}</select></label>
<label class="erase"><span><input type="checkbox" name="erase" value="true"${kept?.erase === true && html` checked`}> Also erase them</span>
<span class="notice bad">Erasing cannot be undone: every stored message of these users is erased and each destination is sent a delete request, as <code>POST /v1/deletions</code> does.</span></label>
<button type="submit">Suppress</button>
</form>`
}
