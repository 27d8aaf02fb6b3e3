import { describe, expect, it } from 'vitest'
import { resultOf } from '../../../src/relay/features/functions/replies'

// What the worker answers for a call, as the relay reads it (src/relay/features/functions/replies.ts).
const read = (text: string) => resultOf(text, 1.5, 1_000, 64)

describe('a call reply, read', () => {
  it('reads the constant replies of a call that logged nothing', () => {
    expect(read('{"kind":"event"}\n{"type":"track","n":1}')).toEqual({
      kind: 'event',
      event: { type: 'track', n: 1 },
      logs: [],
      logsTruncated: false,
      ms: 1.5,
    })
    expect(read('{"kind":"pass"}')).toMatchObject({ kind: 'pass', logs: [] })
    expect(read('{"kind":"drop"}')).toMatchObject({ kind: 'drop', logs: [] })
  })

  it("keeps a call's console lines and how it ended", () => {
    expect(read('{"kind":"event","logs":["a"],"logsTruncated":false}\n{"n":2}')).toMatchObject({
      kind: 'event',
      event: { n: 2 },
      logs: ['a'],
    })
    expect(read('{"kind":"error","code":"timeout","message":"interrupted","logs":[]}')).toMatchObject({
      kind: 'error',
      code: 'ERR_FUNCTION_TIMEOUT',
      message: 'the function ran past functionTimeout (1000 ms)',
    })
  })

  it('answers an error, never throws, for a reply or an event it cannot read', () => {
    expect(read('{"kind":"event"}\n{"n":')).toMatchObject({
      kind: 'error',
      message: expect.stringContaining('cannot read'),
    })
    expect(read('{"kind":"event"}\n[1]')).toMatchObject({
      kind: 'error',
      message: expect.stringContaining('cannot read'),
    })
    expect(read('not json')).toMatchObject({ kind: 'error', message: expect.stringContaining('cannot read') })
  })
})
