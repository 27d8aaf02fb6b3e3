import type { HealthReport } from '../../../events/readings'
import { type Html, html } from '../../../console/page/html'
import { layout } from '../../../console/page/layout'
import { SECURITY_HEADERS } from '../../../console/page/respond'

/**
 * The live view's Content-Security-Policy: the page's, plus its one same-origin script
 * (`/ui/live.js`) and the stream it reads (same origin). Only `/ui/live` is sent this.
 */
export const LIVE_CSP = `${SECURITY_HEADERS['content-security-policy']}; script-src 'self'; connect-src 'self'`

/** The live view (`/ui/live`): the stream's events as rows, filtered and paused by `/ui/live.js`. */
export function livePage(view: { csrfToken: string; health: HealthReport; sources: readonly string[] }): Html {
  return layout(
    'Live view',
    html`<main>
<p><a href="/">← Overview</a></p>
<h1>Live view <span class="muted">· every relay sharing this store</span></h1>
<div class="filters">
  <label>Source <select id="live-source">
    <option value="">All sources</option>
    ${view.sources.map((name) => html`<option value="${name}">${name}</option>`)}
  </select></label>
  <label>Type <input type="text" id="live-type" placeholder="track, identify…" autocomplete="off"></label>
  <label>Event <input type="text" id="live-event" autocomplete="off"></label>
  <label>userId <input type="text" id="live-user" autocomplete="off"></label>
  <button type="button" id="live-pause" aria-pressed="false">Pause</button>
</div>
<p class="muted" id="live-state" role="status">Connecting…</p>
<table class="live">
  <thead><tr><th>At (UTC)</th><th>Kind</th><th>Source</th><th>Message</th><th>userId</th><th>messageId</th><th>What happened</th><th></th></tr></thead>
  <tbody id="live-rows"></tbody>
</table>
<noscript><p class="notice bad">The live view needs its script: the rest of the page works without one.</p></noscript>
<script src="/ui/live.js"></script>
</main>`,
    { csrfToken: view.csrfToken, health: view.health },
  )
}
