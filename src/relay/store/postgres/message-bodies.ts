import type { NewDelivery } from '../store'

/**
 * What separates the messages' JSON texts in enqueue's one text parameter: U+001E, the ASCII record
 * separator. Valid JSON never holds a raw control character but tab, LF and CR (inside strings
 * they are escaped), so no message's text can contain it.
 */
const SEPARATOR = '\u001e'
const CODE = SEPARATOR.charCodeAt(0)

/**
 * The messages' JSON texts of enqueue, in the batch's order, from the text parameter `param`
 * (written by {@link joinBodies}). As a `text[]` parameter, the driver escaped every quote and
 * backslash of every message for the array literal (two regular expressions over each message:
 * the relay's largest cost per message on PostgreSQL) and the server unescaped them; a split on one
 * character costs neither side much (bench/ingest-only.mjs).
 */
export const BODIES_OF = (param: string): string => `string_to_array(${param}, chr(${CODE}))`

/**
 * The messages' JSON texts as enqueue's one text parameter ({@link BODIES_OF}).
 *
 * @throws {TypeError} when a message's text holds the separator: it is not JSON (JSON.stringify,
 * which writes every message the store is given, never writes it).
 */
export function joinBodies(deliveries: readonly NewDelivery[]): string {
  let bodies = ''
  for (const [i, d] of deliveries.entries()) {
    if (d.json.includes(SEPARATOR)) {
      const id = JSON.stringify(d.messageId)
      throw new TypeError(`the JSON of message ${id} holds U+001E: it is not JSON`)
    }
    bodies += i === 0 ? d.json : SEPARATOR + d.json
  }
  return bodies
}
