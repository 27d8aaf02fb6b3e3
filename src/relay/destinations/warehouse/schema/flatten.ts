import { identifierOf, joinedIdentifier } from './names'

/**
 * Hands each of an object's fields to `add`, flattened with `_` (`{ page: { url } }` under
 * `context` → `context_page_url`), each key as an identifier. Nested objects are followed;
 * arrays are one value (loaded as JSON text); `null` and `undefined` add nothing.
 *
 * @param prefix the identifier before the object's own fields (`context`), or `''`.
 */
export function flatten(fields: unknown, prefix: string, add: (name: string, value: unknown) => void): void {
  if (!isPlainObject(fields)) return
  for (const key in fields) {
    if (!Object.hasOwn(fields, key)) continue
    const value = fields[key]
    if (value === null || value === undefined) continue
    const name = prefix === '' ? identifierOf(key) : joinedIdentifier(prefix, identifierOf(key))
    if (isPlainObject(value)) flatten(value, name, add)
    else add(name, value)
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
