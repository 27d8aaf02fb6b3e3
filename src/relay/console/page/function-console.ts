import { redactUrl } from '../../../shared/redact-url'
import type { DeliveryView } from '../../store/store'
import { type Html, html } from './html'

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
