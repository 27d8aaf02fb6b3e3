import type { BacklogRow, DeliveryStatus, DeliveryView } from '../../store/store'
import type { HealthReport } from '../../events/readings'
import type { LastHour, RecentRates } from '../../events/readings'
import { lastHourCharts } from './charts-view'
import { redactUrlsInText } from '../../redact'
import type { EndpointView } from '../../store/endpoints'
import { endpointsTable } from './endpoints-view'
import { filterForm, overviewLink, STATUS_LABELS } from './filter-form'
import { attemptTarget, functionConsole } from './function-console'
import { type Html, html } from './html'
import { age, layout, truncate, when } from './layout'
import { isReadOnlyPage } from './sessions'
import { orderWaitText } from '../order-wait'

/** Everything the dashboard shows. */
export interface DashboardView {
  csrfToken: string
  health: HealthReport
  sources: readonly string[]
  backlog: readonly BacklogRow[]
  rates: RecentRates
  /** The last hour, minute by minute, for the charts. */
  lastHour: LastHour
  /** Every endpoint whose circuit is not closed (open, half-open, paused): shown first. */
  troubled: readonly EndpointView[]
  /** The page's query as the user wrote it, empty values dropped (the filters, `q`, `refresh`). */
  query: ReadonlyMap<string, string>
  /** The webhook URLs by origin and path, for the filter. */
  urls: readonly string[]
  deliveries: readonly DeliveryView[]
  /** The cursor of the next (older) page, when there is one. */
  next: string | undefined
  /** How many dead letters "Retry all" would queue: only on a list of dead letters. */
  retryAll: number | undefined
  /** What the last action did, when it was one. */
  notice: string | undefined
  /** Seconds until the page reloads by itself; `undefined` when the user turned that off. */
  refreshSeconds: number | undefined
  now: number
}

/** The sign-in form (or why there is none). */
export function signInPage(options: { open: boolean; error?: string | undefined; next: string }): Html {
  const form = options.open
    ? html`<form method="post" action="/ui/sign-in">
    <input type="hidden" name="next" value="${options.next}">
    <label>Admin token or read token <input type="password" name="token" autocomplete="current-password" required autofocus></label>
    <button type="submit">Sign in</button>
  </form>`
    : html`<p class="notice bad">The page is closed: the relay has no <span class="mono">adminToken</span> configured.</p>`
  return layout(
    'Sign in',
    html`<main><div class="signin">
  <h1>Sign in</h1>
  <p class="muted">The operator page of this relay. Sign in with its admin token, or its read token to look without changing anything.</p>
  ${options.error !== undefined && html`<p class="notice bad" role="alert">${options.error}</p>`}
  ${form}
</div></main>`,
  )
}

/** The overview: health, troubled endpoints, rates, the outbox per source, and the deliveries found. */
export function dashboardPage(view: DashboardView): Html {
  return layout(
    'Overview',
    html`<main>
${healthNotice(view.health)}
${view.notice !== undefined && html`<p class="notice" role="status">${view.notice}</p>`}
${refreshNote(view)}
${
  view.troubled.length > 0 &&
  html`<h2>Endpoints not delivering <span class="muted">· every relay sharing this store</span></h2>
${endpointsTable(view.troubled, view.csrfToken, view.now)}`
}
<p><a href="/ui/endpoints">All endpoints →</a> · <a href="/ui/live">Live view →</a> · <a href="/ui/violations">Tracking plan violations →</a></p>
<h2>Last ${view.rates.minutes} minutes <span class="muted">· this relay only</span></h2>
<div class="tiles">
  ${tile('Ingested', view.rates.ingested, 'msg/min')}
  ${tile('Delivered', view.rates.delivered, '/min')}
  ${tile('Retried', view.rates.retried, '/min')}
  ${tile('Dead-lettered', view.rates.deadLettered, '/min', view.rates.deadLettered > 0)}
</div>
<h2>Last hour <span class="muted">· this relay only, a bar per minute</span></h2>
${lastHourCharts(view.lastHour)}
<h2>Outbox <span class="muted">· every relay sharing this store</span></h2>
${outboxTable(view)}
<h2 id="deliveries">Recent deliveries <span class="muted">· every relay sharing this store</span></h2>
${filterForm({
  query: view.query,
  sources: view.sources,
  urls: view.urls,
  refreshOff: view.refreshSeconds === undefined,
  readOnly: isReadOnlyPage(view.csrfToken),
})}
${
  view.retryAll !== undefined &&
  view.retryAll > 0 &&
  html`<p class="bulk"><a class="button" href="/ui/retry${overviewLink(view.query, { q: undefined, refresh: undefined, cursor: undefined, retried: undefined }, false).slice(1)}">Retry all ${view.retryAll}</a></p>`
}
${deliveryTable(view)}
${
  view.next !== undefined &&
  html`<div class="pager"><a href="${overviewLink(view.query, { cursor: view.next })}">Older deliveries →</a></div>`
}
</main>`,
    { csrfToken: view.csrfToken, health: view.health, refreshSeconds: view.refreshSeconds },
  )
}

/** One delivery: its fields, every request of every attempt, and the message. */
export function deliveryPage(view: {
  csrfToken: string
  health: HealthReport
  delivery: DeliveryView
  /** The endpoints it goes to: while one is not closed, its circuit decides the next attempt. */
  endpoints: readonly EndpointView[]
  notice: string | undefined
  now: number
}): Html {
  const d = view.delivery
  const held = d.status === 'pending' ? view.endpoints.filter((e) => e.state !== 'closed') : []
  return layout(
    `Delivery ${d.id}`,
    html`<main>
<p><a href="/">← Overview</a></p>
${view.notice !== undefined && html`<p class="notice" role="status">${view.notice}</p>`}
<h1>Delivery ${d.id} ${statusBadge(d.status)}</h1>
${d.status === 'failed' && retryForm(d.id, view.csrfToken, 'Retry now')}
<h2>Details</h2>
<dl class="fields">
  <dt>Source</dt><dd>${d.source}</dd>
  <dt>Destination</dt><dd>${d.destination}</dd>
  <dt>Message</dt><dd><span class="mono">${d.messageId}</span> · ${describeMessage(d)}</dd>
  <dt>Written</dt><dd>${when(d.createdAt, view.now)}</dd>
  <dt>Updated</dt><dd>${when(d.updatedAt, view.now)}</dd>
  ${
    d.nextAttemptAt !== null &&
    html`<dt>Next attempt</dt><dd>${
      held.length > 0
        ? html`when its endpoint answers a probe: ${held.map((e, i) => html`${i > 0 && ', '}<span class="mono">${e.url}</span> is ${e.state}${e.nextProbeAt !== undefined && html`, next probe ${when(new Date(e.nextProbeAt).toISOString(), view.now)}`}`)}`
        : when(d.nextAttemptAt, view.now)
    }</dd>`
  }
  ${d.waiting !== undefined && html`<dt>Waiting</dt><dd>${redactUrlsInText(d.waiting)}</dd>`}
  ${d.waitingBehind !== undefined && orderWait(d.waitingBehind)}
  ${d.lastError !== null && html`<dt>Last error</dt><dd class="error">${redactUrlsInText(d.lastError)}</dd>`}
</dl>
${
  view.endpoints.length > 0 &&
  html`<h2>Its endpoints</h2>
${endpointsTable(view.endpoints, view.csrfToken, view.now)}`
}
<h2>Attempts (${d.attempts.length} ${d.attempts.length === 1 ? 'request' : 'requests'})</h2>
${
  d.attempts.length === 0
    ? html`<p class="muted">No attempt yet.</p>`
    : html`<table class="attempts">
  <thead><tr><th>At</th><th>URL</th><th>Result</th><th class="num">Duration</th><th>What was said</th></tr></thead>
  <tbody>${d.attempts.map(
    (a) => html`<tr>
    <td>${when(a.at, view.now)}</td>
    <td class="mono">${attemptTarget(a)}</td>
    <td${a.error !== undefined || (a.status ?? 0) >= 300 ? html` class="error"` : ''}>${
      a.status !== undefined ? html`<strong>HTTP ${a.status}</strong>` : ''
    }${a.error !== undefined && html`${a.status !== undefined ? ' · ' : ''}${redactUrlsInText(a.error)}`}</td>
    <td class="num">${a.ms} ms</td>
    <td>${exchange(a)}${functionConsole(a)}</td>
  </tr>`,
  )}</tbody>
</table>`
}
<h2>Message</h2>
<pre class="json">${JSON.stringify(d.message, null, 2)}</pre>
</main>`,
    view,
  )
}

/** A page for a refused request (a bad filter, a stale form). */
export function errorPage(status: number, message: string, signedIn: boolean): Html {
  return layout(
    `Error ${status}`,
    html`<main>
<h1>Error ${status}</h1>
<p class="notice bad">${message}</p>
<p><a href="/">${signedIn ? '← Overview' : 'Sign in'}</a></p>
</main>`,
  )
}

// Whether the page reloads by itself, with the link that turns it on or off (the same view).
function refreshNote(view: DashboardView): Html {
  const here = overviewLink(view.query, { refresh: view.refreshSeconds === undefined ? undefined : 'off' }, false)
  return html`<p class="muted refresh">${
    view.refreshSeconds === undefined
      ? html`Not reloading by itself. <a href="${here}">Reload every few seconds</a>`
      : html`Reloads every ${view.refreshSeconds} s. <a href="${here}">Stop reloading</a>`
  }</p>`
}

function healthNotice(health: HealthReport): Html | undefined {
  if (health.ok) return undefined
  return html`<p class="notice bad" role="alert">/healthz answers 503: ${health.reason}</p>`
}

function tile(label: string, value: number, unit: string, bad = false): Html {
  return html`<div class="tile${bad ? ' bad' : ''}"><div class="label">${label}</div><div class="value">${formatRate(
    value,
  )} <span class="unit">${unit}</span></div></div>`
}

function outboxTable(view: DashboardView): Html {
  const names = [...new Set([...view.sources, ...view.backlog.map((row) => row.source)])]
  const row = (source: string, status: 'pending' | 'failed') =>
    view.backlog.find((r) => r.source === source && r.status === status)
  return html`<table>
  <thead><tr><th>Source</th><th class="num">Pending</th><th class="num">Oldest pending</th><th class="num">Dead-lettered</th><th class="num">Oldest dead letter</th></tr></thead>
  <tbody>${names.map((source) => {
    const pending = row(source, 'pending')
    const failed = row(source, 'failed')
    return html`<tr>
    <td>${source}${!view.sources.includes(source) && html` <span class="muted">(no longer configured)</span>`}</td>
    <td class="num">${pending?.count ?? 0}</td>
    <td class="num">${pending === undefined ? '–' : age(view.now - pending.oldestCreatedAt)}</td>
    <td class="num">${
      failed === undefined
        ? 0
        : html`<a href="${overviewLink(
            new Map([
              ['status', 'failed'],
              ['source', source],
            ]),
          )}">${failed.count}</a>`
    }</td>
    <td class="num">${failed === undefined ? '–' : age(view.now - failed.oldestCreatedAt)}</td>
  </tr>`
  })}</tbody>
</table>`
}

function deliveryTable(view: DashboardView): Html {
  if (view.deliveries.length === 0) return html`<p class="muted">No delivery matches.</p>`
  return html`<table>
  <thead><tr><th>Id</th><th>Updated</th><th>Source</th><th>Message</th><th>Status</th><th class="num">Requests</th><th>Last error</th><th></th></tr></thead>
  <tbody>${view.deliveries.map(
    (d) => html`<tr>
    <td><a href="/ui/deliveries/${d.id}">${d.id}</a></td>
    <td>${when(d.updatedAt, view.now)}</td>
    <td>${d.source}</td>
    <td>${describeMessage(d)}</td>
    <td>${statusBadge(d.status)}</td>
    <td class="num">${d.attempts.length}</td>
    <td class="error">${d.lastError === null ? '' : lastError(d.lastError)}</td>
    <td>${d.status === 'failed' && retryForm(d.id, view.csrfToken, 'Retry')}</td>
  </tr>`,
  )}</tbody>
</table>`
}

// A long error is cut, but never its HTTP status: it is what says who broke (`…/hooks/down: HTTP 500`).
function lastError(error: string): Html {
  const status = /\bHTTP (\d{3})\b/.exec(error)?.[1]
  return html`${status !== undefined && html`<strong>HTTP ${status}</strong> · `}${truncate(redactUrlsInText(error), 140)}`
}

// What the receiver answered (the start of its body) and the headers sent (secrets shown as present).
function exchange(attempt: DeliveryView['attempts'][number]): Html | undefined {
  const headers = Object.entries(attempt.requestHeaders ?? {})
  if (attempt.responseBody === undefined && headers.length === 0) return undefined
  return html`${
    attempt.responseBody !== undefined &&
    html`<details class="exchange" open><summary>Response body</summary><pre class="body">${attempt.responseBody === '' ? '(empty)' : attempt.responseBody}</pre></details>`
  }${
    headers.length > 0 &&
    html`<details class="exchange"><summary>Request headers</summary><pre class="body">${headers
      .map(([name, value]) => `${name}: ${value}`)
      .join('\n')}</pre></details>`
  }`
}

function retryForm(id: number, csrfToken: string, label: string): Html {
  return html`<form method="post" action="/ui/deliveries/${id}/retry">
  <input type="hidden" name="csrf" value="${csrfToken}">
  <button type="submit" aria-label="Retry delivery ${id}">${label}</button>
</form>`
}

function statusBadge(status: DeliveryStatus): Html {
  return html`<span class="status ${status}">${STATUS_LABELS[status]}</span>`
}

// A track's event name or a page's name says more than the type alone.
function describeMessage(d: DeliveryView): Html {
  const message = (d.message ?? {}) as Record<string, unknown>
  const detail = typeof message['event'] === 'string' ? message['event'] : message['name']
  return typeof detail === 'string' && detail.length > 0
    ? html`<span class="muted">${d.type}</span> ${truncate(detail, 80)}`
    : html`${d.type}`
}

function formatRate(value: number): string {
  return value >= 100 ? Math.round(value).toLocaleString('en') : value.toFixed(1)
}

// Why a pending delivery to an ordered destination waits, with a link to the one ahead of it.
function orderWait(ahead: number): Html {
  return html`<dt>Waiting</dt><dd>${orderWaitText(ahead)}: <a href="/ui/deliveries/${ahead}">delivery ${ahead}</a></dd>`
}
