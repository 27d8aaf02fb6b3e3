import type { EndpointView } from '../../store/endpoints'
import type { HealthReport } from '../../events/readings'
import { type Html, html } from './html'
import { layout, truncate, when } from './layout'
import { destinationNotes } from './destination-notes'
import { functionNotes } from './function-console'
import { functionsOf } from '../function-health'
import type { RecentFunctionCallsView } from '../function-health'
import type { EndpointLimitJson } from '../endpoint-limits'

/** What the endpoints view shows. */
export interface EndpointsView {
  csrfToken: string
  health: HealthReport
  endpoints: readonly EndpointView[]
  /** Each function's calls of the last minutes in this relay. */
  functions?: readonly RecentFunctionCallsView[] | undefined
  /** The limited endpoints' limits, by id (docs/delivery-controls.md). */
  limits?: ReadonlyMap<string, EndpointLimitJson> | undefined
  notice: string | undefined
  refreshSeconds: number | undefined
  now: number
}

/** `/ui/endpoints`: every webhook URL the relay sends to, its health, and Pause / Resume. */
export function endpointsPage(view: EndpointsView): Html {
  return layout(
    'Endpoints',
    html`<main>
<p><a href="/">← Overview</a></p>
${view.notice !== undefined && html`<p class="notice" role="status">${view.notice}</p>`}
<h1>Endpoints</h1>
<p class="muted">Each webhook URL (query string hidden), as every relay sharing this store sees it: counts and latency over the last 5 minutes.</p>
${endpointsTable(view.endpoints, view.csrfToken, view.now, view.functions, view.limits)}
</main>`,
    view,
  )
}

/** The endpoints as a table, each with its Pause or Resume button. */
export function endpointsTable(
  endpoints: readonly EndpointView[],
  csrfToken: string,
  now: number,
  functions: readonly RecentFunctionCallsView[] = [],
  limits: ReadonlyMap<string, EndpointLimitJson> = new Map(),
): Html {
  if (endpoints.length === 0) return html`<p class="muted">No webhook URL is configured.</p>`
  return html`<table class="endpoints">
  <thead><tr><th>URL</th><th>Sources</th><th>State</th><th>Next probe</th><th>Last error</th><th class="num">Pending</th><th class="num">Delivered 5 min</th><th class="num">Failed 5 min</th><th class="num">p50 / p99</th><th>Limit</th><th></th></tr></thead>
  <tbody>${endpoints.map(
    (e) => html`<tr>
    <td class="mono">${e.url}${destinationNotes(e, now)}</td>
    <td>${e.sources.join(', ')}${functionNotes(functionsOf(e.sources, functions), now)}</td>
    <td><span class="circuit ${e.state}">${e.state}</span>${
      e.pausedAt !== undefined && html`<div class="muted">since ${at(e.pausedAt, now)}</div>`
    }</td>
    <td>${e.nextProbeAt === undefined ? (e.state === 'half-open' ? 'in flight' : '–') : at(e.nextProbeAt, now)}</td>
    <td class="error">${
      e.lastFailure === undefined
        ? ''
        : html`${e.lastFailure.status === undefined ? '' : html`<strong>HTTP ${e.lastFailure.status}</strong> `}${
            e.lastFailure.error === `HTTP ${e.lastFailure.status}` ? '' : truncate(e.lastFailure.error, 120)
          }${
            e.lastFailure.responseBody !== undefined &&
            html`<div class="mono body">${truncate(e.lastFailure.responseBody, 160)}</div>`
          }<div class="muted">${at(e.lastFailure.at, now)}</div>`
    }</td>
    <td class="num">${e.pending}</td>
    <td class="num">${e.recent.delivered}</td>
    <td class="num">${e.recent.failed}</td>
    <td class="num">${e.recent.p50 === undefined ? '–' : `${e.recent.p50} / ${e.recent.p99 ?? '–'} ms`}</td>
    <td>${limitCell(limits.get(e.id), now)}</td>
    <td>${pauseForm(e, csrfToken)}</td>
  </tr>`,
  )}</tbody>
</table>`
}

// A limited endpoint's limits, every relay's requests in flight, and a receiver's hold.
function limitCell(limit: EndpointLimitJson | undefined, now: number): Html | string {
  if (limit === undefined) return '–'
  const parts = [
    limit.ratePerSecond === undefined ? undefined : `${limit.ratePerSecond}/s`,
    limit.maxInFlight === undefined ? undefined : `${limit.inFlight} of ${limit.maxInFlight} in flight`,
  ].filter((part) => part !== undefined)
  return html`<span class="limit">${parts.join(' · ')}</span>${
    limit.heldUntil !== undefined &&
    html`<div class="muted">held (Retry-After) until ${at(Date.parse(limit.heldUntil), now)}</div>`
  }`
}

function pauseForm(endpoint: EndpointView, csrfToken: string): Html {
  const verb = endpoint.state === 'paused' ? 'resume' : 'pause'
  const label = verb === 'pause' ? 'Pause' : 'Resume'
  return html`<form method="post" action="/ui/endpoints/${endpoint.id}/${verb}">
  <input type="hidden" name="csrf" value="${csrfToken}">
  <button type="submit"${verb === 'pause' ? html` class="secondary"` : ''} aria-label="${label} ${endpoint.url}">${label}</button>
</form>`
}

function at(ms: number, now: number): Html {
  return when(new Date(ms).toISOString(), now)
}
