import { describe, expect, it } from 'vitest'
import { openDatabase } from '../../src/relay/database'
import { GroupCommit } from '../../src/relay/group-commit'
import { HttpError, jsonDepth } from '../../src/relay/http'
import { ingest } from '../../src/relay/ingest'
import { Outbox } from '../../src/relay/outbox'

const source = { name: 'web', destinations: ['Webhooks'] }
const message = { type: 'track', userId: 'u1', event: 'E', messageId: 'm1' }

describe('ingest', () => {
  it('answers 503, never success, when the outbox cannot be written', async () => {
    const db = openDatabase(':memory:')
    const outbox = new Outbox(db)
    db.close() // the disk went away between the request and the commit
    let error: unknown
    try {
      await ingest(new GroupCommit(outbox), source, [message])
    } catch (caught) {
      error = caught
    }
    expect(error).toBeInstanceOf(HttpError)
    expect(error).toMatchObject({ status: 503, code: 'ERR_OUTBOX_UNAVAILABLE' })
  })

  it('writes one delivery per enabled destination and leaves the caller’s message unchanged', async () => {
    const db = openDatabase(':memory:')
    try {
      const outbox = new Outbox(db)
      const given = { type: 'identify', userId: 'u1' }
      expect(
        await ingest(new GroupCommit(outbox), source, [given, { ...given, integrations: { Webhooks: false } }]),
      ).toEqual({ success: true, accepted: 2, refused: [] })
      expect(given).toEqual({ type: 'identify', userId: 'u1' })
      const [delivery, ...others] = outbox.list({ after: 0, limit: 10 })
      expect(others).toEqual([])
      expect(delivery!.message).toMatchObject({
        type: 'identify',
        userId: 'u1',
        messageId: expect.any(String),
        timestamp: expect.any(String),
      })
    } finally {
      db.close()
    }
  })
})

describe('jsonDepth', () => {
  it.each([
    ['1', 0],
    ['{}', 1],
    ['{"a":[1,{"b":2}]}', 3],
    ['["[[[", "\\"[[["]', 1],
    ['[[]][[[]]]', 3],
  ])('%s is %d deep', (text, depth) => {
    expect(jsonDepth(text)).toBe(depth)
  })
})
