import type { HealthReport } from '../../events/readings'
import { type Html, html } from './html'
import { isReadOnlyPage } from './sessions'

/** The whole document around a page's body. */
export function layout(
  title: string,
  body: Html,
  header?: { csrfToken: string; health: HealthReport; refreshSeconds?: number | undefined },
): Html {
  const readOnly = header !== undefined && isReadOnlyPage(header.csrfToken)
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
${header?.refreshSeconds !== undefined && html`<meta http-equiv="refresh" content="${header.refreshSeconds}">`}
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="same-origin">
<title>${title} · Tracklet relay</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/ui/page.css">
</head>
<body${readOnly && html` class="read-only"`}>
<header class="bar">
  <a class="brand" href="/">Tracklet <span>relay</span></a>
  ${header && healthBadge(header.health)}
  ${header && html`<a href="/ui/sources">Sources</a> <a href="/ui/suppressions">Suppressions</a>`}
  <div class="spacer"></div>
  ${
    header &&
    html`<form method="post" action="/ui/sign-out" class="sign-out">
    <input type="hidden" name="csrf" value="${header.csrfToken}">
    <button type="submit">Sign out</button>
  </form>`
  }
</header>
${readOnly && html`<p class="notice read-only-notice" role="status">Signed in with the read token: you can look at everything and change nothing.</p>`}
${body}
</body>
</html>
`
}

function healthBadge(health: HealthReport): Html {
  const store = health.ok
    ? html`<span class="health ok">store healthy</span>`
    : html`<span class="health bad" title="${health.reason}">store unavailable: ${truncate(health.reason, 90)}</span>`
  return html`${store}${unreadableBadge(health.unreadableSources ?? [])}`
}

// API sources the relay cannot decrypt: served by no relay until the right secretsKey is given.
function unreadableBadge(unreadable: readonly { name: string; error: string }[]): Html | false {
  if (unreadable.length === 0) return false
  const names = unreadable.map((source) => source.name).join(', ')
  const why = unreadable.map((source) => source.error).join('\n')
  const label = `${unreadable.length === 1 ? 'source' : 'sources'} not served (cannot decrypt): ${names}`
  return html` <span class="health bad" title="${why}">${truncate(label, 120)}</span>`
}

/** A time as `<time>`, relative to `now` (`3 min ago`, `in 5 s`), its ISO form in the title. */
export function when(iso: string, now: number): Html {
  const ms = Date.parse(iso)
  const delta = now - ms
  const relative = delta >= 0 ? `${age(delta)} ago` : `in ${age(-delta)}`
  return html`<time datetime="${iso}" title="${iso}">${relative}</time>`
}

/** A duration as people say it: `42 s`, `3 min`, `1.5 h`, `2.0 d`. */
export function age(ms: number): string {
  const seconds = Math.max(0, Math.round(ms / 1000))
  if (seconds < 60) return `${seconds} s`
  if (seconds < 3600) return `${Math.round(seconds / 60)} min`
  if (seconds < 86_400) return `${(seconds / 3600).toFixed(1)} h`
  return `${(seconds / 86_400).toFixed(1)} d`
}

/** `text` cut to `max` characters, with an ellipsis when cut. */
export function truncate(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text
}
