import { identifierOf, joinedIdentifier } from './names'

/**
 * Adds an object's fields to `into`, flattened with `_` (`{ page: { url } }` under `context` →
 * `context_page_url`), each key as an identifier. Nested objects are followed; arrays are one
 * value (loaded as JSON text); `null` and `undefined` add nothing. A later field whose name
 * meets an earlier one's (`orderTotal` and `order_total`) replaces it.
 *
 * @param prefix the identifiers before the object's own (`['context']`), or none.
 */
export function flattenInto(into: Map<string, unknown>, fields: unknown, prefix: readonly string[] = []): void {
  if (!isPlainObject(fields)) return
  for (const [key, value] of Object.entries(fields)) {
    if (value === null || value === undefined) continue
    const path = [...prefix, identifierOf(key)]
    if (isPlainObject(value)) flattenInto(into, value, path)
    else into.set(joinedIdentifier(path), value)
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
