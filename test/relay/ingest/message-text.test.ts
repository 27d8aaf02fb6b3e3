import { describe, expect, it } from 'vitest'
import type { NewDelivery } from '../../../src/relay/store/store'
import { freshPostgresDatabase, sql } from '../../support/postgres'
import { openTestStore } from '../../support/stores'

// PostgreSQL's enqueue takes the messages' JSON as one text, split on U+001E by the statement
// (src/relay/store/postgres/message-bodies.ts), not as an escaped text array: each message column
// must still hold the exact text the relay serialised, in the batch's order, whatever it contains.
const HOSTILE = [
  { q: 'a "quoted" \\ back\\\\slash', sep: '\u2028\u2029', nul: '\u0000', ctl: '\u0001\u001f' },
  { lone: '\ud800', pair: '😀', tail: 'x\udc00', braces: '}],{["' },
  { n: [1, 2.5, 1e21, -0, 5e-324], nested: { deep: [{ a: null }, true, false] } },
  { unicode: 'é中\u200b', emptyKey: { '': '' }, apostrophe: "'; DROP TABLE messages; --" },
]

function delivery(i: number, json: string): NewDelivery {
  return { source: 'web', destination: 'Webhooks', messageId: `m-${i}`, type: 'track', json }
}

describe('enqueue on PostgreSQL keeps each message as serialised', () => {
  it('stores every message text byte for byte, in the batch order, hostile ones too', async () => {
    const url = await freshPostgresDatabase()
    const store = await openTestStore('postgres', Date.now, url)
    try {
      const texts = [
        ...HOSTILE.map((fields, i) => JSON.stringify({ messageId: `m-${i}`, ...fields })),
        // A text JSON.stringify never writes (spaces, key order) is kept as it is too.
        `{ "type" : "track",\n\t"messageId": "m-${HOSTILE.length}" , "z": 1, "a": 2 }`,
        // Enough rows that an order the database chose for itself would show.
        ...Array.from({ length: 300 }, (_, k) => `{"messageId":"m-${HOSTILE.length + 1 + k}"}`),
      ]
      expect(await store.enqueue(texts.map((json, i) => delivery(i, json)))).toBe(texts.length)
      const rows = await sql<{ message_id: string; message: string }>(
        url,
        'SELECT message_id, message FROM messages ORDER BY id',
      )
      expect(rows.map((r) => r.message_id)).toEqual(texts.map((_, i) => `m-${i}`))
      expect(rows.map((r) => r.message)).toEqual(texts)

      // A text holding the separator is no JSON: refused, naming the message, and nothing written.
      const bad = [delivery(1000, '{"a":1}'), delivery(1001, '{"a":"\u001e"}')]
      await expect(store.enqueue(bad)).rejects.toThrow(
        new TypeError('the JSON of message "m-1001" holds U+001E: it is not JSON'),
      )
      expect(await sql(url, 'SELECT 1 FROM messages WHERE message_id = $1', ['m-1000'])).toEqual([])
    } finally {
      await store.close()
    }
  })
})
