import { redactUrl } from '../../../shared/redact-url'
import type { AdminContext } from '../operations'
import { queryValues } from '../delivery-filter'
import { readSearch } from '../find'
import { HttpError } from '../../http/http-error'
import type { EndpointView } from '../../store/endpoints'
import { encodeCursor } from '../../store/filter'
import type { BacklogRow, DeliveryFilter, DeliveryPage } from '../../store/store'
import { PAGE_PARAMS } from './filter-form'
import { retryDeadLetters } from '../retry-dead-letters'

/** Deliveries per page of the overview. */
export const PAGE_SIZE = 50

/** What the overview reads from the store for one request. */
export interface Overview {
  /** The page's query as written, empty values dropped. */
  query: Map<string, string>
  backlog: BacklogRow[]
  /** Every endpoint whose circuit is not closed. */
  troubled: EndpointView[]
  page: DeliveryPage
  /** How many dead letters "Retry all" would queue, on a list of dead letters. */
  retryAll: number | undefined
  /** The webhook URLs by origin and path. */
  urls: string[]
}

/**
 * Reads the overview of `searchParams`: the filters of the delivery log (as `GET /v1/deliveries`
 * takes them, an unknown or malformed one a 400 naming it), `q` (a messageId or a userId),
 * `cursor`, and `refresh` (read by the caller).
 */
export async function readOverview(
  context: AdminContext,
  searchParams: URLSearchParams,
  now: number,
): Promise<Overview> {
  const query = queryValues(searchParams, 'ERR_INVALID_QUERY', { dropEmpty: true })
  const search = readSearch(context, query, [...PAGE_PARAMS, 'retried'])
  const retried = query.get('retried')
  if (retried !== undefined && !/^\d{1,12}$/.test(retried))
    throw new HttpError(400, 'ERR_INVALID_QUERY', 'retried must be a count of deliveries')
  const q = query.get('q')
  if (q !== undefined && (query.has('messageId') || query.has('userId')))
    throw new HttpError(
      400,
      'ERR_INVALID_QUERY',
      'q finds a messageId or a userId: give it alone, or messageId / userId',
    )
  const endpoints = [...context.webhooks].map(([url, routes]) => ({ url, routes }))
  const [backlog, views, page, retryAll] = await Promise.all([
    context.store.backlog(),
    context.store.endpoints({ endpoints, now }),
    q === undefined
      ? context.store.find({ ...search.filter, cursor: search.cursor, limit: PAGE_SIZE })
      : findEither(context, search.filter, q, search.cursor),
    // Not with `q`: the count would be of the filter without the search.
    search.filter.status === 'failed' && q === undefined
      ? retryDeadLetters(context, search.filter, { dryRun: true }).then((r) => r.matched)
      : undefined,
  ])
  return {
    query,
    backlog,
    troubled: views.filter((view) => view.state !== 'closed'),
    page,
    retryAll,
    urls: [...new Set(endpoints.map((e) => redactUrl(e.url)))],
  }
}

// The search box: deliveries whose messageId is `q`, and those whose userId is, newest first.
async function findEither(
  context: AdminContext,
  filter: DeliveryFilter,
  q: string,
  cursor: string | undefined,
): Promise<DeliveryPage> {
  const [byMessage, byUser] = await Promise.all([
    context.store.find({ ...filter, messageId: q, cursor, limit: PAGE_SIZE }),
    context.store.find({ ...filter, userId: q, cursor, limit: PAGE_SIZE }),
  ])
  const merged = [...new Map([...byMessage.deliveries, ...byUser.deliveries].map((d) => [d.id, d])).values()].sort(
    (a, b) => b.id - a.id,
  )
  const deliveries = merged.slice(0, PAGE_SIZE)
  const more = merged.length > PAGE_SIZE || byMessage.next !== undefined || byUser.next !== undefined
  return { deliveries, next: more && deliveries.length > 0 ? encodeCursor(deliveries.at(-1)!.id) : undefined }
}
