import type { HealthReport } from '../../events/readings'
import { type Html, html } from './html'
import { layout, when } from './layout'

/** What the page shows while the store does not answer. */
export interface OutageView {
  csrfToken: string
  /** The store's error, one line, URLs redacted. */
  reason: string
  /** `/healthz`'s report now (it may still be ok: reads can fail before any write does). */
  health: HealthReport
  /** When the store was last known healthy, epoch ms; `undefined` when not since the relay started. */
  lastHealthy: number | undefined
  /** Seconds until the page reloads by itself; `undefined` when the user turned that off. */
  refreshSeconds: number | undefined
  now: number
}

/**
 * The page answered (503) while the store does not answer, instead of an error: the badge red with
 * the reason, what still works, since when. It reloads by itself (unless turned off), so it turns
 * back into the overview once the store answers again.
 */
export function outagePage(view: OutageView): Html {
  const health: HealthReport = view.health.ok ? { ok: false, reason: view.reason, failing: [] } : view.health
  return layout(
    'Store unavailable',
    html`<main>
<h1>The store is unavailable</h1>
<p class="notice bad" role="alert">The relay cannot read its outbox: ${view.reason}</p>
<dl class="fields">
  <dt>Last healthy</dt><dd>${
    view.lastHealthy === undefined
      ? 'not since this relay started'
      : when(new Date(view.lastHealthy).toISOString(), view.now)
  }</dd>
  <dt>/healthz</dt><dd>${view.health.ok ? 'answers 200 (no write has failed yet)' : `answers 503: ${view.health.reason}`}</dd>
</dl>
<h2>What still works</h2>
<ul>
  <li>Messages already accepted are safe in the outbox: nothing is lost, delivery resumes when the store answers.</li>
  <li>Ingest answers 503 (<span class="mono">ERR_OUTBOX_UNAVAILABLE</span>) to new messages; the SDKs keep them and send them again.</li>
  <li><span class="mono">/healthz</span> and <span class="mono">/metrics</span> still answer (<span class="mono">tracklet_store_writable</span> is 0 once a write fails).</li>
  <li>The admin API answers 503 <span class="mono">ERR_STORE_UNAVAILABLE</span> until the store is back.</li>
</ul>
<p class="muted">${
      view.refreshSeconds === undefined
        ? html`This page does not reload by itself. <a href="/?refresh=off">Reload now</a>.`
        : html`This page reloads every ${view.refreshSeconds} s and turns back into the overview once the store answers. <a href="/?refresh=off">Stop reloading</a>.`
    }</p>
</main>`,
    { csrfToken: view.csrfToken, health, refreshSeconds: view.refreshSeconds },
  )
}
