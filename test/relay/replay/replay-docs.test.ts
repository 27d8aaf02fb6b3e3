import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { DEFAULT_REPLAY_RATE, MAX_REPLAY_RATE } from '../../../src/relay/features/replay/replays-api'
import { REPLAY_PENDING_LIMIT } from '../../../src/relay/store/replays'

// docs/replay.md states the replay API's default and limits: tied to the constants here.
const doc = readFileSync(new URL('../../../docs/replay.md', import.meta.url), 'utf8').replace(/\s+/g, ' ')

describe('docs/replay.md', () => {
  it('says the default rate, the highest rate and the pending limit the code has', () => {
    expect(doc).toContain(`(default ${DEFAULT_REPLAY_RATE}, at most ${MAX_REPLAY_RATE.toLocaleString('en')})`)
    expect(doc).toContain(`At most ${REPLAY_PENDING_LIMIT} copies of one replay are pending at a time`)
  })
})
