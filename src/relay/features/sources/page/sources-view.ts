import { redactUrl } from '../../../../shared/redact-url'
import type { SourceView } from '../../../sources/api-source-codec'
import type { HealthReport } from '../../../events/readings'
import { type Html, html } from '../../../console/page/html'
import { layout } from '../../../console/page/layout'

/** What the sources view shows. */
export interface SourcesPageView {
  csrfToken: string
  health: HealthReport
  sources: readonly (SourceView & { etag: string })[]
  notice: string | undefined
  /** A key just made, shown this once. */
  newKey?: { source: string; writeKey: string } | undefined
}

/**
 * `/ui/sources`: every source, the config file's marked as such (read-only here) and the admin
 * API's with their actions: enable or disable, add or remove a webhook URL, add or delete a write
 * key. Secrets are shown masked, URLs without their query string.
 */
export function sourcesPage(view: SourcesPageView): Html {
  return layout(
    'Sources',
    html`<main>
<p><a href="/">← Overview</a></p>
${view.notice !== undefined && html`<p class="notice" role="status">${view.notice}</p>`}
${
  view.newKey !== undefined &&
  html`<p class="notice" role="status">New write key of ${view.newKey.source}, shown this once: <code class="mono" id="new-write-key">${view.newKey.writeKey}</code></p>`
}
<h1>Sources</h1>
<p class="muted">Sources from the config file are changed by editing the file; the others were created through the admin API and are shared by every relay on this store.</p>
${view.sources.length === 0 ? html`<p class="muted">No source yet.</p>` : view.sources.map((s) => sourceCard(s, view.csrfToken))}
</main>`,
    view,
  )
}

function sourceCard(source: SourceView & { etag: string }, csrf: string): Html {
  const webhooks = source.destinations.Webhooks
  const urls = webhooks?.webhooks ?? []
  const name = encodeURIComponent(source.name)
  const editable = !source.provisioned
  const form = (action: string, fields: Html | string, label: string, secondary = false) =>
    html`<form method="post" action="/ui/sources/${name}/${action}" class="inline">
  <input type="hidden" name="csrf" value="${csrf}"><input type="hidden" name="etag" value="${source.etag}">${fields}
  <button type="submit"${secondary ? html` class="secondary"` : ''}>${label}</button>
</form>`
  return html`<section class="source" data-source="${source.name}">
<h2>${source.name} ${
    source.provisioned ? html`<span class="muted">(config file)</span>` : html`<span class="muted">(admin API)</span>`
  } ${source.enabled ? '' : html`<span class="health bad">disabled</span>`}</h2>
${
  editable &&
  form(
    'enabled',
    html`<input type="hidden" name="enabled" value="${source.enabled ? 'false' : 'true'}">`,
    source.enabled ? 'Disable' : 'Enable',
    source.enabled,
  )
}
<h3>Webhook URLs</h3>
<ul>${urls.map(
    (entry, index) =>
      html`<li><span class="mono">${redactUrl(entry.url)}</span>${
        entry.headers !== undefined &&
        html` <span class="muted">headers: ${Object.keys(entry.headers).join(', ')} (values hidden)</span>`
      } ${editable && form('webhooks/remove', html`<input type="hidden" name="index" value="${index}">`, 'Remove', true)}</li>`,
  )}</ul>
${webhooks?.sharedSecret !== undefined && html`<p class="muted">Shared secret: ${webhooks.sharedSecret}</p>`}
${editable && form('webhooks/add', html`<input type="url" name="url" required placeholder="https://…" aria-label="Webhook URL to add">`, 'Add URL')}
<h3>Write keys</h3>
<ul>${source.writeKeys.map(
    (key) =>
      html`<li><span class="mono">${key.prefix}…</span> <span class="muted">${key.createdAt ?? 'from the file'}</span> ${
        editable &&
        source.writeKeys.length > 1 &&
        form('write-keys/delete', html`<input type="hidden" name="id" value="${key.id}">`, 'Delete', true)
      }</li>`,
  )}</ul>
${editable && form('write-keys/add', '', 'Rotate: add a key')}
</section>`
}
