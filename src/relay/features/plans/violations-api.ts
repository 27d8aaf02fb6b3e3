import { HttpError } from '../../http/http-error'
import { decodeViolationCursor } from '../../store/violation-rows'
import {
  VIOLATION_KINDS,
  type ViolationKind,
  type ViolationPage,
  type ViolationQuery,
  type ViolationStore,
} from '../../store/violations'
import { parseFilter, queryValues } from '../../console/delivery-filter'
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from '../../console/find'

const CODE = 'ERR_INVALID_QUERY'
/** The parameters of `GET /v1/violations`. */
export const VIOLATION_PARAMETERS = ['source', 'event', 'kind', 'since', 'limit', 'cursor'] as const

/**
 * `GET /v1/violations?source&event&kind&since&limit&cursor`: the violations of tracking plans,
 * newest first, a page at a time as the delivery log is (`next`, absent on the last page). An
 * unknown or malformed parameter is a 400 naming it.
 */
export async function handleViolations(
  violations: Pick<ViolationStore, 'find'>,
  query: URLSearchParams,
  now: number,
): Promise<ViolationPage> {
  return violations.find(readViolationQuery(query, now))
}

/** A search of the violations from a query string, every parameter checked. */
export function readViolationQuery(query: URLSearchParams, now: number): ViolationQuery {
  const values = queryValues(query, CODE)
  for (const key of values.keys()) {
    if (!(VIOLATION_PARAMETERS as readonly string[]).includes(key))
      throw new HttpError(
        400,
        CODE,
        `unknown parameter ${JSON.stringify(key)}; allowed: ${VIOLATION_PARAMETERS.join(', ')}`,
      )
  }
  // source, event and since read as the delivery log reads them.
  const shared = new Map([...values].filter(([key]) => key === 'source' || key === 'event' || key === 'since'))
  const { source, event, since } = parseFilter(shared, { kind: 'query', code: CODE }, [], now)
  const result: ViolationQuery = { source, event, since, limit: limitOf(values.get('limit')) }
  const kind = values.get('kind')
  if (kind !== undefined) {
    if (!(VIOLATION_KINDS as readonly string[]).includes(kind))
      throw new HttpError(400, CODE, `kind must be one of ${VIOLATION_KINDS.join(', ')}, got ${JSON.stringify(kind)}`)
    result.kind = kind as ViolationKind
  }
  const cursor = values.get('cursor')
  if (cursor !== undefined) {
    try {
      decodeViolationCursor(cursor)
    } catch (error) {
      throw new HttpError(400, CODE, (error as Error).message)
    }
    result.cursor = cursor
  }
  return result
}

function limitOf(raw: string | undefined): number {
  if (raw === undefined) return DEFAULT_PAGE_SIZE
  const value = /^\d{1,4}$/.test(raw) ? Number(raw) : Number.NaN
  if (!(value >= 1 && value <= MAX_PAGE_SIZE))
    throw new HttpError(400, CODE, `limit must be an integer from 1 to ${MAX_PAGE_SIZE}, got ${JSON.stringify(raw)}`)
  return value
}
