// An id of the stores (a delivery's, a replay's, an audit entry's, a source's revision) as a path,
// a query, a cursor or an ETag writes it: digits only, at most 15 (a safe integer, as the stores'
// ids are). The one place the admin API and the operator page agree on it.
export const STORE_ID_PATTERN = '\\d{1,15}'

const STORE_ID = new RegExp(`^${STORE_ID_PATTERN}$`)

/** The id `text` names, or `undefined` when it names none. */
export function storeIdOf(text: string): number | undefined {
  return STORE_ID.test(text) ? Number(text) : undefined
}
