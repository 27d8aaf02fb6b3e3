import type { DeliveryFilter, DeliveryPage, DeliveryView, FindQuery, NewestQuery, RetryMatchingResult } from './store'
import { idCursor } from './id-cursor'

// A delivery filter as both dialects write it: which fields are given (in one fixed order, so a
// statement's text depends only on which are given, and is prepared once per combination), and
// the opaque cursor of a page.

/** A field of {@link DeliveryFilter}. */
export type FilterField = keyof DeliveryFilter

/** The filter fields compared to one column for equality, and that column. */
export const EQUALITY_COLUMNS = {
  status: 'status',
  source: 'source',
  messageId: 'message_id',
  userId: 'user_id',
  event: 'event',
  type: 'type',
} as const satisfies Record<(typeof EQUALITY_FIELDS)[number], string>

/** The fields compared to a column for equality, in statement order (the console's too). */
export const EQUALITY_FIELDS = ['status', 'source', 'messageId', 'userId', 'event', 'type'] as const

/** The fields bounding the time of receipt, epoch ms (the console's too). */
export const TIME_FIELDS = ['since', 'until'] as const

// Every field, in the order statements list their conditions (and PostgreSQL numbers its parameters).
// `routes` is what the console's `url` resolves to.
export const FIELD_ORDER: readonly FilterField[] = [...EQUALITY_FIELDS, ...TIME_FIELDS, 'routes']

/** The fields `filter` gives, in statement order. */
export function filterFields(filter: DeliveryFilter): FilterField[] {
  return FIELD_ORDER.filter((field) => filter[field] !== undefined)
}

/** Whether `field` is compared to a column for equality (and which). */
export function isEqualityField(field: FilterField): field is keyof typeof EQUALITY_COLUMNS {
  return field in EQUALITY_COLUMNS
}

/** The filter's fields without `status` (a bulk replay's status is always `failed`). */
export function withoutStatus(filter: DeliveryFilter): DeliveryFilter {
  const { status: _status, ...rest } = filter
  return rest
}

/**
 * What a replay (`retryMatching`) filters dead letters by: the filter without its status, or
 * `undefined` when it asks for another status than `failed`, so nothing can match.
 */
export function deadLetterFilter(filter: DeliveryFilter): DeliveryFilter | undefined {
  return filter.status === undefined || filter.status === 'failed' ? withoutStatus(filter) : undefined
}

/** A replay's answer when nothing matched. */
export function nothingMatched(dryRun: boolean | undefined): RetryMatchingResult {
  return dryRun ? { matched: 0 } : { matched: 0, retried: 0 }
}

/**
 * `find`, on any store's newest-first list: one more row than asked tells whether another page
 * follows, and its cursor.
 */
export async function findPage(
  query: FindQuery,
  listNewest: (query: NewestQuery) => Promise<DeliveryView[]>,
): Promise<DeliveryPage> {
  const { cursor, limit, ...filter } = query
  const before = cursor === undefined ? undefined : decodeCursor(cursor)
  return toPage(await listNewest({ ...filter, before, limit: limit + 1 }), limit)
}

/** A page of at most `limit` deliveries from `rows` (read with one more, to know whether a next page exists). */
export function toPage(rows: DeliveryView[], limit: number): DeliveryPage {
  if (rows.length <= limit) return { deliveries: rows, next: undefined }
  const deliveries = rows.slice(0, limit)
  return { deliveries, next: encodeCursor(deliveries.at(-1)!.id) }
}

const DELIVERY_CURSOR = idCursor('d1.')

/** The opaque cursor of the page that starts below the delivery `id`. */
export const encodeCursor = DELIVERY_CURSOR.encode

/**
 * The id below which the page of `cursor` starts.
 * @throws {TypeError} when `cursor` was not made by {@link encodeCursor}.
 */
export const decodeCursor = DELIVERY_CURSOR.decode
