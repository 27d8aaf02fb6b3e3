import { MESSAGE_TYPES } from '../../../shared/message'
import type { DeliveryStatus } from '../../store/store'
import { type Html, html } from './html'

/** The page's own query parameters besides the filter fields. */
export const PAGE_PARAMS = ['q', 'cursor', 'refresh'] as const

/** Each delivery status as the page names it: in the filter's choice and on each delivery. */
export const STATUS_LABELS: Readonly<Record<DeliveryStatus, string>> = {
  pending: 'pending',
  delivered: 'delivered',
  failed: 'dead-lettered',
  filtered: 'filtered',
}

const STATUS_OPTIONS = Object.entries(STATUS_LABELS)

/** What the filter form shows: the query as the user wrote it (empty values dropped). */
export interface FilterFormView {
  query: ReadonlyMap<string, string>
  sources: readonly string[]
  /** The webhook URLs by origin and path, for the URL choice. */
  urls: readonly string[]
  refreshOff: boolean
  /** A read-only session: no link to start a replay (it could not). */
  readOnly: boolean
}

/**
 * The overview's search: a box for a messageId or a userId, and every filter of the delivery log
 * (the same names as `GET /v1/deliveries`), as a GET form: the result is a link to share.
 */
export function filterForm(view: FilterFormView): Html {
  const value = (key: string) => view.query.get(key) ?? ''
  const option = (current: string, optionValue: string, label: string) =>
    html`<option value="${optionValue}"${current === optionValue ? html` selected` : ''}>${label}</option>`
  const choice = (key: string, label: string, options: readonly (readonly [string, string])[]) => {
    const current = value(key)
    const known = options.some(([v]) => v === current)
    return html`<label>${label} <select name="${key}">
    ${option(current, '', 'any')}
    ${options.map(([v, text]) => option(current, v, text))}
    ${current !== '' && !known && option(current, current, current)}
  </select></label>`
  }
  const text = (key: string, label: string, placeholder = '') =>
    html`<label>${label} <input type="text" name="${key}" value="${value(key)}" placeholder="${placeholder}"></label>`
  return html`<form class="filters" method="get" action="/" role="search">
  <label class="search">Find a message <input type="search" name="q" value="${value('q')}" placeholder="messageId or userId"></label>
  ${choice('status', 'Status', STATUS_OPTIONS)}
  ${choice(
    'source',
    'Source',
    view.sources.map((s) => [s, s] as const),
  )}
  ${choice(
    'type',
    'Type',
    MESSAGE_TYPES.map((t) => [t, t] as const),
  )}
  ${text('event', 'Event')}
  ${choice(
    'url',
    'Webhook URL',
    view.urls.map((u) => [u, u] as const),
  )}
  ${text('since', 'Since', '2026-11-24T09:00:00Z')}
  ${text('until', 'Until', 'ISO 8601 or epoch ms')}
  ${['messageId', 'userId'].map((key) => view.query.has(key) && html`<input type="hidden" name="${key}" value="${value(key)}">`)}
  ${view.refreshOff && html`<input type="hidden" name="refresh" value="off">`}
  <button type="submit" class="secondary">Filter</button>
  ${!view.readOnly && html`<a href="${replayLink(view.query)}">Replay these…</a>`} <a href="/ui/replays">Replays</a>
</form>`
}

/** The replay form (docs/replay.md) for the filter of `query` (the page's own parameters left out). */
export function replayLink(query: ReadonlyMap<string, string>): string {
  const params = new URLSearchParams()
  for (const [key, value] of query)
    if (value !== '' && !(PAGE_PARAMS as readonly string[]).includes(key)) params.set(key, value)
  const text = params.toString()
  return `/ui/replays/new${text === '' ? '' : `?${text}`}`
}

/**
 * A link to the overview with `query` (its empty values left out) changed by `changes`
 * (`undefined` removes a parameter), at the list of deliveries unless `anchor` is false.
 */
export function overviewLink(
  query: ReadonlyMap<string, string>,
  changes: Record<string, string | undefined> = {},
  anchor = true,
): string {
  const params = new URLSearchParams()
  for (const [key, value] of query) if (!(key in changes) && value !== '') params.set(key, value)
  for (const [key, value] of Object.entries(changes)) if (value !== undefined) params.set(key, value)
  const text = params.toString()
  return `/${text === '' ? '' : `?${text}`}${anchor ? '#deliveries' : ''}`
}
