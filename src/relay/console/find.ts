import { isPlainObject } from '../../shared/validate'
import { HttpError } from '../http/http-error'
import { decodeCursor } from '../store/filter'
import type { DeliveryFilter, DeliveryView } from '../store/store'
import type { AdminContext } from './operations'
import { type FilterSource, parseFilter, queryValues, type RequestedFilter } from './delivery-filter'
import { routesOfUrl } from './webhook-urls'
import { withProbeTimes } from './probe-times'
import { withOrderWait } from './order-wait'
import { storeIdOf } from '../store/store-id'
import { retryDeadLetters } from './retry-dead-letters'

/** The delivery log's page size when none is asked for, and the largest allowed. */
export const DEFAULT_PAGE_SIZE = 50
export const MAX_PAGE_SIZE = 500

const QUERY: FilterSource = { kind: 'query', code: 'ERR_INVALID_QUERY' }
const BODY: FilterSource = { kind: 'body', code: 'ERR_INVALID_BODY', prefix: 'filter.' }

/** A search of the delivery log as a query string gives it. */
export interface DeliverySearch {
  filter: DeliveryFilter
  cursor: string | undefined
  limit: number
}

/**
 * `GET /v1/deliveries?status&source&messageId&userId&event&type&url&since&until&cursor&limit`:
 * newest first, a page at a time (`next` is the cursor of the next page, `null` on the last).
 */
export async function handleFind(
  context: AdminContext,
  query: URLSearchParams,
): Promise<{ deliveries: DeliveryView[]; next: string | null }> {
  const search = readSearch(context, queryValues(query, QUERY.code), ['cursor', 'limit'])
  const page = await context.store.find({ ...search.filter, cursor: search.cursor, limit: search.limit })
  return { deliveries: await withProbeTimes(context, page.deliveries), next: page.next ?? null }
}

/**
 * A search from a query's values: the filter, `cursor` (checked here: a cursor the store never gave
 * is a 400 naming it) and `limit`. `others` are every further name the caller accepts.
 */
export function readSearch(
  context: AdminContext,
  values: ReadonlyMap<string, string>,
  others: readonly string[],
): DeliverySearch {
  const filter = toStoreFilter(context, parseFilter(values, QUERY, others), QUERY)
  const cursor = values.get('cursor')
  if (cursor !== undefined) {
    try {
      decodeCursor(cursor)
    } catch (error) {
      throw new HttpError(400, QUERY.code, (error as Error).message)
    }
  }
  return { filter, cursor, limit: limitOf(values.get('limit')) }
}

/** `GET /v1/deliveries/:id`: one delivery with its attempts. */
export async function handleGetDelivery(context: AdminContext, id: string): Promise<DeliveryView> {
  const numeric = storeIdOf(id) ?? Number.NaN
  const delivery = Number.isNaN(numeric) ? undefined : await context.store.get(numeric)
  if (delivery === undefined) throw new HttpError(404, 'ERR_NOT_FOUND', `there is no delivery ${JSON.stringify(id)}`)
  const [shown] = await withProbeTimes(context, [await withOrderWait(context.store, delivery)])
  return shown!
}

/**
 * `POST /v1/deliveries/retry { filter, dryRun }`: how many dead letters the filter matches and,
 * unless a dry run, every one of them queued again with a fresh retry window.
 */
export async function handleRetryMatching(
  context: AdminContext,
  body: Record<string, unknown>,
): Promise<{ matched: number; retried?: number }> {
  for (const key of Object.keys(body)) {
    if (key !== 'filter' && key !== 'dryRun')
      throw new HttpError(400, BODY.code, `unknown field ${JSON.stringify(key)}; allowed: filter, dryRun`)
  }
  const { filter: raw, dryRun = false } = body
  if (typeof dryRun !== 'boolean') throw new HttpError(400, BODY.code, 'dryRun must be true or false')
  if (!isPlainObject(raw))
    throw new HttpError(400, BODY.code, 'filter must be an object of filter fields ({} for every dead letter)')
  const filter = retryFilter(context, new Map(Object.entries(raw)), BODY)
  const result = await retryDeadLetters(context, filter, { dryRun })
  if (!dryRun && (result.retried ?? 0) > 0) context.wake()
  return dryRun ? { matched: result.matched } : { matched: result.matched, retried: result.retried ?? 0 }
}

/** A bulk replay's filter: any status but `failed` is refused (only dead letters are replayed). */
export function retryFilter(
  context: AdminContext,
  values: ReadonlyMap<string, unknown>,
  source: FilterSource,
  others: readonly string[] = [],
): DeliveryFilter {
  const filter = toStoreFilter(context, parseFilter(values, source, others), source)
  const name = source.kind === 'body' ? `${source.prefix}status` : 'status'
  if (filter.status !== undefined && filter.status !== 'failed')
    throw new HttpError(400, source.code, `${name} can only be "failed": only dead letters are retried`)
  return { ...filter, status: 'failed' }
}

// The filter as the store takes it: a `url` becomes the routes that send there.
function toStoreFilter(context: AdminContext, requested: RequestedFilter, source: FilterSource): DeliveryFilter {
  const { url, ...rest } = requested
  if (url === undefined) return rest
  const name = source.kind === 'body' ? `${source.prefix}url` : 'url'
  return { ...rest, routes: routesOfUrl(context.webhooks, url, name, source.code) }
}

function limitOf(raw: string | undefined): number {
  if (raw === undefined) return DEFAULT_PAGE_SIZE
  const value = /^\d{1,4}$/.test(raw) ? Number(raw) : Number.NaN
  if (!(value >= 1 && value <= MAX_PAGE_SIZE))
    throw new HttpError(
      400,
      QUERY.code,
      `limit must be an integer from 1 to ${MAX_PAGE_SIZE}, got ${JSON.stringify(raw)}`,
    )
  return value
}
