import { MESSAGE_TYPES } from '../../shared/message'
import { describe } from '../../shared/validate'
import { HttpError } from '../http/http-error'
import { EQUALITY_FIELDS, TIME_FIELDS } from '../store/filter'
import { findNul } from '../store/storable'
import { DELIVERY_STATUSES, type DeliveryStatus } from '../store/store'

/**
 * The fields a search of the delivery log and a bulk replay filter by: in a query string
 * (`GET /v1/deliveries?…`, the page) or in a body (`POST /v1/deliveries/retry { filter }`).
 */
export const FILTER_FIELDS = [...EQUALITY_FIELDS, 'url', ...TIME_FIELDS] as const

/** One of {@link FILTER_FIELDS}. */
export type FilterField = (typeof FILTER_FIELDS)[number]

/**
 * A filter as the operator wrote it: `url` is still a webhook URL (the caller resolves it to the
 * routes that send there), `since` and `until` are epoch ms.
 */
export interface RequestedFilter {
  status?: DeliveryStatus
  source?: string
  messageId?: string
  userId?: string
  event?: string
  type?: string
  url?: string
  since?: number
  until?: number
}

// The longest text value a filter takes: longer than any id or name a message may carry.
const MAX_TEXT_CHARS = 1000

// An ISO 8601 date or date-time (`2026-11-24`, `2026-11-24T22:05:00Z`, `…T22:05:00.123+01:00`).
const ISO_8601 = /^\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2}))?$/

// A time ago: a whole number and its unit (`90s`, `5m`, `2h`, `7d`), in ms per unit.
const AGO = /^(\d{1,6})([smhd])$/
const AGO_UNIT_MS: Readonly<Record<string, number>> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }

/** Where a filter came from, to name its fields as the user wrote them (`filter.status` in a body). */
export type FilterSource = { kind: 'query'; code: string } | { kind: 'body'; code: string; prefix: string }

/**
 * Reads the filter fields of `values` (a query's parameters, or a body's `filter` object), each
 * checked: an unknown name or a malformed value is a 400 naming it; `since` after `until` too.
 * `others` are the further names the caller reads itself (`cursor`, `limit`): not unknown here.
 * A time ago (`since=5m`) is counted back from `now` (epoch ms).
 */
export function parseFilter(
  values: ReadonlyMap<string, unknown>,
  source: FilterSource,
  others: readonly string[] = [],
  now: number = Date.now(),
): RequestedFilter {
  const name = (field: string) => (source.kind === 'body' ? `${source.prefix}${field}` : field)
  const refuse = (message: string): never => {
    throw new HttpError(400, source.code, message)
  }
  for (const key of values.keys()) {
    if (!(FILTER_FIELDS as readonly string[]).includes(key) && !others.includes(key)) {
      refuse(
        `unknown ${source.kind === 'query' ? 'parameter' : 'field'} ${JSON.stringify(name(key))}; allowed: ${[...FILTER_FIELDS, ...others].join(', ')}`,
      )
    }
  }
  const filter: RequestedFilter = {}
  for (const field of FILTER_FIELDS) {
    if (!values.has(field)) continue
    const value = values.get(field)
    const text = (
      typeof value === 'number' && (field === 'since' || field === 'until') ? String(value) : value
    ) as unknown
    if (typeof text !== 'string' || text.length === 0 || text.length > MAX_TEXT_CHARS)
      refuse(
        `${name(field)} must be a non-empty string of at most ${MAX_TEXT_CHARS} characters, got ${describe(value)}`,
      )
    const checked = text as string
    const nul = findNul(name(field), checked)
    if (nul !== undefined) refuse(nul)
    switch (field) {
      case 'status':
        if (!DELIVERY_STATUSES.includes(checked as DeliveryStatus))
          refuse(`${name(field)} must be one of ${DELIVERY_STATUSES.join(', ')}, got ${JSON.stringify(checked)}`)
        filter.status = checked as DeliveryStatus
        break
      case 'type':
        if (!(MESSAGE_TYPES as readonly string[]).includes(checked))
          refuse(`${name(field)} must be one of ${MESSAGE_TYPES.join(', ')}, got ${JSON.stringify(checked)}`)
        filter.type = checked
        break
      case 'since':
      case 'until':
        filter[field] = instant(checked, name(field), refuse, now)
        break
      default:
        filter[field] = checked
    }
  }
  if (filter.since !== undefined && filter.until !== undefined && filter.since > filter.until)
    refuse(`${name('since')} must not be after ${name('until')}`)
  return filter
}

/** A query string's parameters, each given at most once (a repeated one is a 400 naming it). */
export function queryValues(query: URLSearchParams, code: string, { dropEmpty = false } = {}): Map<string, string> {
  const values = new Map<string, string>()
  for (const [key, value] of query) {
    if (values.has(key)) throw new HttpError(400, code, `parameter ${JSON.stringify(key)} is given more than once`)
    // A form's "any" choice sends an empty value: the page drops it, the API refuses it.
    if (dropEmpty && value === '') continue
    values.set(key, value)
  }
  return values
}

// Epoch ms (`1764021900000`), ISO 8601 (a date alone is midnight UTC; a date-time needs its
// offset), or a time ago (`5m`: five minutes before `now`).
function instant(text: string, name: string, refuse: (message: string) => never, now: number): number {
  if (/^\d{1,15}$/.test(text)) return Number(text)
  const ago = AGO.exec(text)
  if (ago !== null) return now - Number(ago[1]) * AGO_UNIT_MS[ago[2]!]!
  const ms = ISO_8601.test(text) && isCalendarDate(text) ? Date.parse(text) : Number.NaN
  if (Number.isNaN(ms))
    refuse(
      `${name} must be an ISO 8601 time with its offset (2026-11-24T22:05:00Z), epoch milliseconds or a time ago (90s, 5m, 2h, 7d), got ${JSON.stringify(text.slice(0, 60))}`,
    )
  return ms
}

// Whether the text's date exists: Date.parse takes 2026-02-30 as March 2.
function isCalendarDate(text: string): boolean {
  const [year, month, day] = text.slice(0, 10).split('-').map(Number) as [number, number, number]
  const date = new Date(Date.UTC(year, month - 1, day))
  return date.getUTCMonth() === month - 1 && date.getUTCDate() === day
}
