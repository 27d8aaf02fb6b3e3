import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import {
  DEFAULT_REPLAY_RATE,
  MAX_REPLAY_RATE,
  REPLAY_FIELDS,
  REPLAY_ORIGINS,
} from '../../../src/relay/features/replay/replays-api'
import { REPLAY_PENDING_LIMIT } from '../../../src/relay/store/replays'

// docs/replay.md states the replay API's default and limits: tied to the constants here.
const text = readFileSync(new URL('../../../docs/replay.md', import.meta.url), 'utf8')
const doc = text.replace(/\s+/g, ' ')

describe('docs/replay.md', () => {
  it('says the default rate, the highest rate and the pending limit the code has', () => {
    expect(doc).toContain(`(default ${DEFAULT_REPLAY_RATE}, at most ${MAX_REPLAY_RATE.toLocaleString('en')})`)
    expect(doc).toContain(`At most ${REPLAY_PENDING_LIMIT} copies of one replay are pending at a time`)
  })

  it("lists the replay request's fields, their defaults and the origins the code takes", () => {
    const table = text.slice(text.indexOf('| field | default |'))
    const rows = [...table.matchAll(/^\| `(\w+)` \| ([^|]+) \|/gm)].map(([, field, cell]): [string, string] => [
      field!,
      cell!.trim(),
    ])
    expect(rows.map(([field]) => field)).toEqual([...REPLAY_FIELDS])
    const defaults = new Map(rows)
    expect(defaults.get('from')).toBe(`\`"${REPLAY_ORIGINS[0]}"\``)
    expect(defaults.get('ratePerSecond')).toBe(`\`${DEFAULT_REPLAY_RATE}\``)
    for (const origin of REPLAY_ORIGINS) expect(text).toContain(`\`"${origin}"\``)
  })
})
