import { describe, expect, it } from 'vitest'
import { jsonDepth } from '../../../src/relay/http/body'
import { HttpError } from '../../../src/relay/http/http-error'
import { IngestError } from '../../../src/relay/ingest/ingest-error'
import { httpErrorOf } from '../../../src/relay/ingest/routes'
import { GroupCommit } from '../../../src/relay/ingest/group-commit'
import { ingest } from '../../../src/relay/ingest/ingest'
import { openSqliteStoreWithDb } from '../fixtures/store'

const source = { name: 'web', destinations: ['Webhooks'] }
const message = { type: 'track', userId: 'u1', event: 'E', messageId: 'm1' }

describe('ingest', () => {
  it('answers 503, never success, when the outbox cannot be written', async () => {
    const { store: outbox, db } = await openSqliteStoreWithDb()
    db.close() // the disk went away between the request and the commit
    let error: unknown
    try {
      await ingest(new GroupCommit(outbox), source, [message])
    } catch (caught) {
      error = caught
    }
    expect(error).toBeInstanceOf(IngestError)
    expect(error).toMatchObject({ kind: 'store-unavailable' })
    // …which the ingest routes answer with 503.
    const answered = httpErrorOf(error as IngestError)
    expect(answered).toBeInstanceOf(HttpError)
    expect(answered).toMatchObject({ status: 503, code: 'ERR_OUTBOX_UNAVAILABLE' })
  })

  it('writes one delivery per enabled destination and leaves the caller’s message unchanged', async () => {
    const { store: outbox, db } = await openSqliteStoreWithDb()
    try {
      const given = { type: 'identify', userId: 'u1' }
      expect(
        await ingest(new GroupCommit(outbox), source, [given, { ...given, integrations: { Webhooks: false } }]),
      ).toEqual({ accepted: 2, refused: [], filtered: 0 })
      expect(given).toEqual({ type: 'identify', userId: 'u1' })
      const [delivery, ...others] = await outbox.list({ after: 0, limit: 10 })
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
    // An escaped backslash ends with the string's quote; an escaped quote does not.
    ['["\\\\", [["x"]]]', 3],
    ['["\\\\\\"[[[", ["]"]]', 2],
    ['[["never closed [[[', 2],
  ])('%s is %d deep', (text, depth) => {
    expect(jsonDepth(text)).toBe(depth)
  })
})
