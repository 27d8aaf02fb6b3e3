import type { HealthReport } from '../../events/readings'
import { type Html, html } from '../../console/page/html'
import { layout } from '../../console/page/layout'

/** The confirmation of a bulk replay: what the filter is, and how many dead letters it matches now. */
export interface ReplayView {
  csrfToken: string
  health: HealthReport
  /** The filter fields as the user wrote them (status is always `failed`). */
  filter: ReadonlyMap<string, string>
  matched: number
  /** Where Cancel goes: the list the user came from. */
  back: string
}

/** `/ui/retry?…`: "Retry all N" asks first, showing N; the POST carries the same filter. */
export function replayPage(view: ReplayView): Html {
  const fields = [...view.filter].filter(([key]) => key !== 'status')
  return layout(
    'Retry dead letters',
    html`<main>
<p><a href="${view.back}">← Back to the list</a></p>
<h1>Retry ${view.matched} dead ${view.matched === 1 ? 'letter' : 'letters'}?</h1>
<p>Every dead-lettered delivery matching ${
      fields.length === 0
        ? html`<strong>no other filter (all of them)</strong>`
        : fields.map(
            ([key, value], i) => html`${i > 0 && ', '}<span class="mono">${key}</span> = <strong>${value}</strong>`,
          )
    } is queued again with a fresh 4-hour retry window and attempted at once.</p>
${
  view.matched === 0
    ? html`<p class="muted">Nothing to retry.</p>`
    : html`<form method="post" action="/ui/retry">
  <input type="hidden" name="csrf" value="${view.csrfToken}">
  ${fields.map(([key, value]) => html`<input type="hidden" name="${key}" value="${value}">`)}
  <button type="submit">Retry ${view.matched} now</button>
  <a href="${view.back}">Cancel</a>
</form>`
}
</main>`,
    view,
  )
}
