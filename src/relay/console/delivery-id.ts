// A delivery id as a path or a query writes it: digits only, at most 15 (a safe integer, as the
// stores' ids are). The one place the admin API and the operator page agree on it.
export const DELIVERY_ID_PATTERN = '\\d{1,15}'

const DELIVERY_ID = new RegExp(`^${DELIVERY_ID_PATTERN}$`)

/** The delivery id `text` names, or `undefined` when it names none. */
export function deliveryIdOf(text: string): number | undefined {
  return DELIVERY_ID.test(text) ? Number(text) : undefined
}
