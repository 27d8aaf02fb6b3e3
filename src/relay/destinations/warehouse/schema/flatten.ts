import { identifierOf, joinedIdentifier } from './names'

/**
 * Adds an object's fields to `into`, flattened with `_` (`{ page: { url } }` under `context` →
 * `context_page_url`), each key as an identifier. Nested objects are followed; arrays are one
 * value (loaded as JSON text); `null` and `undefined` add nothing. A later field whose name
 * meets an earlier one's (`orderTotal` and `order_total`) replaces it.
 *
 * @param prefix the identifier before the object's own fields (`context`), or `''`.
 */
export function flattenInto(into: Map<string, unknown>, fields: unknown, prefix = ''): void {
  if (!isPlainObject(fields)) return
  for (const key in fields) {
    if (!Object.hasOwn(fields, key)) continue
    const value = fields[key]
    if (value === null || value === undefined) continue
    const name = prefix === '' ? identifierOf(key) : joinedIdentifier(prefix, identifierOf(key))
    if (isPlainObject(value)) flattenInto(into, value, name)
    else into.set(name, value)
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
