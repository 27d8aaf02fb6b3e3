import { redactUrl } from '../../../shared/redact-url'
import type { DeliveryView } from '../../store/store'
import { FUNCTION_HEALTH_WINDOW_MS } from '../../config/function-limits'
import { failingMostly } from '../function-health'
import type { RecentFunctionCallsView } from '../function-health'
import { type Html, html } from './html'
import { truncate, when } from './layout'

// The parts of a delivery's page that show its destination's function (docs/functions.md).

type AttemptView = DeliveryView['attempts'][number]

/** Where an attempt went: its URL, or that the function ended it before any request. */
export function attemptTarget(attempt: AttemptView): Html | string {
  return attempt.url === '' ? html`<span class="muted">the function (no request)</span>` : redactUrl(attempt.url)
}

/** The `console` lines the function printed during the attempt, when it printed any. */
export function functionConsole(attempt: AttemptView): Html | undefined {
  if (attempt.console === undefined || attempt.console.length === 0) return undefined
  const count = attempt.console.length
  return html`<details class="exchange" open><summary>Function console (${count} ${
    count === 1 ? 'line' : 'lines'
  })</summary><pre class="body">${attempt.console.join('\n')}</pre></details>`
}

/**
 * Under an endpoint's sources: each function's calls of the last minutes, marked as an error when
 * most of them failed, with the last failure (docs/functions.md).
 */
export function functionNotes(rows: readonly RecentFunctionCallsView[], now: number): Html | undefined {
  if (rows.length === 0) return undefined
  return html`${rows.map(
    (row) =>
      html`<div class="${failingMostly(row) ? 'error' : 'muted'}">${row.source}'s function: ${row.failed} of ${
        row.calls
      } ${row.calls === 1 ? 'call' : 'calls'} failed (${FUNCTION_HEALTH_WINDOW_MS / 60_000} min)${
        row.lastError !== undefined &&
        html`<div class="mono">${truncate(row.lastError.error, 160)} · ${when(new Date(row.lastError.at).toISOString(), now)}</div>`
      }</div>`,
  )}`
}
