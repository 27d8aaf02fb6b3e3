import type { HealthReport } from '../../../events/readings'
import { VIOLATION_KINDS, type Violation, type ViolationCount } from '../../../store/violations'
import { type Html, html } from '../../../console/page/html'
import { layout, truncate, when } from '../../../console/page/layout'

/** What the violations view shows. */
export interface ViolationsView {
  csrfToken: string
  health: HealthReport
  /** Counts per source, event (or call type) and kind over {@link windowHours}. */
  counts: readonly ViolationCount[]
  windowHours: number
  /** The newest violations, of the chosen source and event when one is chosen. */
  newest: readonly Violation[]
  /** The source and event chosen, if any. */
  source: string | undefined
  event: string | undefined
  now: number
}

/** One row of the counts: a source's event (or call type), with its count per kind. */
interface CountRow {
  source: string
  type: string
  event: string | undefined
  byKind: Map<string, number>
  lastAt: string
}

/** `/ui/violations`: for each source and event, counts per kind and the newest examples. */
export function violationsPage(view: ViolationsView): Html {
  const chosen =
    view.source === undefined ? '' : ` of ${view.source}${view.event === undefined ? '' : ` · ${view.event}`}`
  return layout(
    'Violations',
    html`<main>
<p><a href="/">← Overview</a></p>
<h1>Tracking plan violations</h1>
<p class="muted">What the sources' tracking plans found at ingest (docs/plans.md), every relay sharing this store. The API: <span class="mono">GET /v1/violations</span>.</p>
<h2>Last ${view.windowHours} hours, per source and event</h2>
${countsTable(rowsOf(view.counts), view.now)}
<h2>Newest${chosen}${view.source !== undefined && html` <a class="muted" href="/ui/violations">(all)</a>`}</h2>
${newestTable(view.newest, view.now)}
</main>`,
    view,
  )
}

function rowsOf(counts: readonly ViolationCount[]): CountRow[] {
  const rows = new Map<string, CountRow>()
  for (const count of counts) {
    const key = JSON.stringify([count.source, count.type, count.event ?? null])
    let row = rows.get(key)
    if (row === undefined) {
      row = { source: count.source, type: count.type, event: count.event, byKind: new Map(), lastAt: count.lastAt }
      rows.set(key, row)
    }
    row.byKind.set(count.kind, count.count)
    if (count.lastAt > row.lastAt) row.lastAt = count.lastAt
  }
  return [...rows.values()]
}

function countsTable(rows: readonly CountRow[], now: number): Html {
  if (rows.length === 0) return html`<p class="muted">No violation in this window.</p>`
  return html`<table class="violations">
  <thead><tr><th>Source</th><th>Event</th>${VIOLATION_KINDS.map((kind) => html`<th class="num">${kind}</th>`)}<th>Last</th></tr></thead>
  <tbody>${rows.map((row) => {
    const query = new URLSearchParams({ source: row.source, ...(row.event === undefined ? {} : { event: row.event }) })
    return html`<tr>
    <td>${row.source}</td>
    <td><a href="/ui/violations?${query.toString()}">${row.event ?? row.type}</a></td>
    ${VIOLATION_KINDS.map((kind) => html`<td class="num">${row.byKind.get(kind) ?? 0}</td>`)}
    <td>${when(row.lastAt, now)}</td>
  </tr>`
  })}</tbody>
</table>`
}

function newestTable(violations: readonly Violation[], now: number): Html {
  if (violations.length === 0) return html`<p class="muted">None.</p>`
  return html`<table class="violations">
  <thead><tr><th>When</th><th>Source</th><th>Event</th><th>Kind</th><th>Path</th><th>What</th><th>Message</th></tr></thead>
  <tbody>${violations.map(
    (v) => html`<tr>
    <td>${when(v.at, now)}</td>
    <td>${v.source}</td>
    <td>${v.event ?? v.type}</td>
    <td>${v.kind}</td>
    <td class="mono">${v.path}</td>
    <td>${truncate(v.message, 160)}</td>
    <td class="mono">${truncate(v.messageId, 40)}</td>
  </tr>`,
  )}</tbody>
</table>`
}
