import { statusOf } from '../../destinations/status-board'
import type { EndpointView } from '../../store/endpoints'
import { type Html, html } from './html'
import { age, truncate, when } from './layout'

/**
 * What the endpoints view shows under a destination's target beyond a webhook's columns: its last
 * success (an archive's last file, a warehouse's last load) and conflicts, as this relay process
 * saw them, and how long the oldest message waiting for it has waited (an archive's lag).
 */
export function destinationNotes(endpoint: EndpointView, now: number): Html | undefined {
  const status = statusOf(endpoint.id)
  const lag = endpoint.oldestPendingAt === undefined ? undefined : Math.max(0, now - endpoint.oldestPendingAt)
  if (status === undefined && (lag === undefined || endpoint.url.startsWith('http'))) return undefined
  return html`${
    status?.last !== undefined &&
    html`<div class="muted">last: ${truncate(status.last.text, 120)} · ${when(new Date(status.last.at).toISOString(), now)}</div>`
  }${
    status?.conflicts !== undefined && html`<div class="muted">conflicts (stored as NULL): ${status.conflicts}</div>`
  }${lag !== undefined && html`<div class="muted">lag: ${age(lag)}</div>`}`
}
