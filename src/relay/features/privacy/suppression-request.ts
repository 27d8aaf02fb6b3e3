import { describe, isNonEmptyString } from '../../../shared/validate'
import { HttpError } from '../../http/http-error'
import { findNul } from '../../store/storable'
import { EVERY_SOURCE } from '../../store/suppressions'

/** The most user ids one `POST /v1/suppressions` may carry (as the platform's regulations). */
export const MAX_SUPPRESSION_IDS = 5000

/** A `POST /v1/suppressions` body, checked. */
export interface SuppressionRequest {
  userIds: string[]
  /** The one source they apply to; absent: every source. */
  source?: string
  /** Also erase each user's stored data and send a delete, as `POST /v1/deletions` does. */
  erase: boolean
}

const KEYS = ['userIds', 'source', 'erase']

/**
 * Checks a `POST /v1/suppressions` body: `userIds` (1 to {@link MAX_SUPPRESSION_IDS} non-empty
 * strings), `source` (one of `sources`), `erase` (a boolean).
 * @throws {HttpError} 400 `ERR_INVALID_BODY` naming the field, the rule and what was received.
 */
export function suppressionRequestOf(body: Record<string, unknown>, sources: readonly string[]): SuppressionRequest {
  const unknown = Object.keys(body).find((key) => !KEYS.includes(key))
  if (unknown !== undefined)
    invalid(`${JSON.stringify(unknown)} is not a field of a suppression (known: ${KEYS.join(', ')})`)
  const { userIds, source, erase } = body
  if (!Array.isArray(userIds) || userIds.length === 0 || userIds.length > MAX_SUPPRESSION_IDS) {
    const got = Array.isArray(userIds) ? `an array of ${userIds.length}` : describe(userIds)
    invalid(`userIds must be an array of 1 to ${MAX_SUPPRESSION_IDS} user ids, got ${got}`)
  }
  userIds.forEach((id: unknown, index) => {
    if (!isNonEmptyString(id)) invalid(`userIds[${index}] must be a non-empty string, got ${describe(id)}`)
    const nul = findNul(`userIds[${index}]`, id)
    if (nul !== undefined) invalid(nul)
  })
  if (erase !== undefined && typeof erase !== 'boolean') invalid(`erase must be true or false, got ${describe(erase)}`)
  const request: SuppressionRequest = { userIds: userIds as string[], erase: erase === true }
  if (source !== undefined) request.source = sourceOf(source, sources, 'source')
  return request
}

/**
 * The `source` of a query (`?source=web`), or `undefined`. Any name: a suppression outlives the
 * source it was made for.
 * @throws {HttpError} 400 `ERR_INVALID_QUERY` when it is empty.
 */
export function sourceQueryOf(params: URLSearchParams): string | undefined {
  const source = params.get('source')
  if (source === null) return undefined
  if (source === '') throw new HttpError(400, 'ERR_INVALID_QUERY', 'source must not be empty')
  return source
}

/**
 * What `source` of a lift means (`DELETE /v1/suppressions/:userId?source`, the page's Lift):
 * {@link LIFT_EVERY_SOURCE} names a user's suppression of every source alone (as a row of the list
 * shows it), a name that source's, and none every suppression of the user.
 */
export const LIFT_EVERY_SOURCE = '*'

/**
 * The suppression a lift removes, as the store takes it: a source's, the one of every source
 * ({@link EVERY_SOURCE}, for {@link LIFT_EVERY_SOURCE}), or `undefined` for all of the user's.
 */
export function liftScopeOf(source: string | undefined): string | undefined {
  return source === LIFT_EVERY_SOURCE ? EVERY_SOURCE : source
}

function sourceOf(value: unknown, sources: readonly string[], field: string): string {
  if (typeof value !== 'string' || !sources.includes(value)) invalid(`${field}: ${unknownSource(value, sources)}`)
  return value
}

function unknownSource(value: unknown, sources: readonly string[]): string {
  const known = sources.length === 0 ? 'there is none' : sources.map((name) => JSON.stringify(name)).join(', ')
  return `must name a configured source (${known}), got ${describe(value)}`
}

function invalid(message: string): never {
  throw new HttpError(400, 'ERR_INVALID_BODY', message)
}
