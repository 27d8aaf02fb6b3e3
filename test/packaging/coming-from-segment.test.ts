import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'

// docs/coming-from-segment.md's table names Segment's options the SDK takes as aliases, and those
// it takes under another name; its snippets are type-checked by check-snippets.mjs.
const page = readFileSync(new URL('../../docs/coming-from-segment.md', import.meta.url), 'utf8')

describe('docs/coming-from-segment.md', () => {
  it.each(['host', 'path', 'maxEventsInBatch', 'httpRequestTimeout', 'interval', 'disable', 'enable', 'errorHandler'])(
    'names `%s` in its table of options',
    (name) => {
      expect(page).toMatch(new RegExp(`^\\|[^\\n]*\`${name}\``, 'm'))
    },
  )

  it("gives the relay's host line for Segment's Node and Go libraries", () => {
    expect(page).toContain("host: 'http://127.0.0.1:8787'")
    expect(page).toContain('analytics.Config{Endpoint: "http://127.0.0.1:8787"}')
    expect(page).toContain('client.Endpoint = "http://127.0.0.1:8787"')
  })
})
