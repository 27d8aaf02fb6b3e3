import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { Analytics, type AnalyticsError, MAX_MESSAGE_BYTES } from '../../src/index'
import { MOCK_ENDPOINT, type MockApi, mockApi } from './helpers/mock-api'
import { settled } from './helpers/settle'

// Every test gets a client with default options, talking to a mock tracking API.
let api: MockApi
let analytics: Analytics

beforeEach(() => {
  api = mockApi()
  analytics = new Analytics('key', { endpoint: MOCK_ENDPOINT, dispatcher: api.agent })
})

afterEach(async () => {
  await analytics.closeAndFlush()
  await api.agent.close()
})

describe('failures reach the callback and the error event, never the caller', () => {
  async function refusal(call: (callback: ReturnType<typeof settled>['callback']) => void): Promise<AnalyticsError> {
    const errors: AnalyticsError[] = []
    analytics.on('error', (error) => errors.push(error))
    const { callback, result } = settled()
    expect(() => call(callback)).not.toThrow()
    const { err } = await result
    expect(err).toBeDefined()
    expect(errors).toEqual([err])
    return err!
  }

  it.each([
    [
      'track without event',
      (a: Analytics, cb: never) => a.track({ userId: 'u' } as never, cb),
      'invalid track call: track needs event',
    ],
    [
      'no user',
      (a: Analytics, cb: never) => a.identify({} as never, cb),
      'invalid identify call: identify needs userId or anonymousId',
    ],
    [
      'group without groupId',
      (a: Analytics, cb: never) => a.group({ userId: 'u' } as never, cb),
      'invalid group call: group needs groupId',
    ],
    [
      'alias without previousId',
      (a: Analytics, cb: never) => a.alias({ userId: 'u' } as never, cb),
      'invalid alias call: alias needs previousId',
    ],
    [
      'not an object',
      (a: Analytics, cb: never) => a.page(null as never, cb),
      'invalid page call: a page call takes an object of fields, got null',
    ],
    [
      'a bad timestamp',
      (a: Analytics, cb: never) => a.screen({ userId: 'u', timestamp: 'yesterday' }, cb),
      'invalid screen call: timestamp must be a Date or an ISO 8601 string with a time zone, got "yesterday"',
    ],
  ])('refuses %s with ERR_INVALID_MESSAGE', async (_name, call, text) => {
    const error = await refusal((callback) => call(analytics, callback as never))
    expect(error.code).toBe('ERR_INVALID_MESSAGE')
    expect(error.message).toBe(text)
  })

  it('refuses unserialisable values: a cycle, a BigInt, a throwing toJSON', async () => {
    const cycle: Record<string, unknown> = {}
    cycle['self'] = cycle
    const throwing = {
      toJSON: () => {
        throw new Error('nope')
      },
    }
    for (const properties of [{ cycle }, { n: 10n }, { throwing }]) {
      const error = await refusal((callback) => analytics.track({ userId: 'u', event: 'e', properties }, callback))
      expect(error.code).toBe('ERR_INVALID_MESSAGE')
      expect(error.message).toMatch(/^invalid track call: cannot be serialised to JSON: /)
      expect(error.analyticsMessage).toMatchObject({ type: 'track', event: 'e', userId: 'u' })
    }
  })

  it('refuses fields whose getter throws', async () => {
    const params = Object.defineProperty({ event: 'e' }, 'userId', {
      enumerable: true,
      get: () => {
        throw new Error('boom')
      },
    })
    const error = await refusal((callback) => analytics.track(params as never, callback))
    expect(error.code).toBe('ERR_INVALID_MESSAGE')
    expect(error.cause).toEqual(new Error('boom'))
  })

  it('refuses calls after closeAndFlush with ERR_CLOSED', async () => {
    await analytics.closeAndFlush()
    const error = await refusal((callback) => analytics.track({ userId: 'u', event: 'late' }, callback))
    expect(error.code).toBe('ERR_CLOSED')
    expect(error.analyticsMessage).toMatchObject({ event: 'late' })
  })

  it('does not throw for an error nobody listens to, and still counts it', async () => {
    expect(analytics.listenerCount('error')).toBe(0)
    analytics.track({ userId: 'u' } as never)
    await new Promise((resolve) => setImmediate(resolve))
    expect(analytics.stats().failed).toBe(1)
  })

  it('survives a callback or listener that throws', async () => {
    analytics.on('error', () => {
      throw new Error('listener bug')
    })
    analytics.track({ userId: 'u' } as never, () => {
      throw new Error('callback bug')
    })
    await new Promise((resolve) => setImmediate(resolve))
    const { callback, result } = settled()
    analytics.track({ userId: 'u', event: 'still works' }, callback)
    await analytics.flush()
    expect((await result).err).toBeUndefined()
  })

  it('calls each callback exactly once, after the call has returned', async () => {
    let returned = false
    let calls = 0
    analytics.track({ userId: 'u' } as never, () => {
      calls++
      expect(returned).toBe(true)
    })
    returned = true
    await analytics.flush()
    await new Promise((resolve) => setImmediate(resolve))
    expect(calls).toBe(1)
  })
})

describe('the 32,000-byte message limit counts UTF-8 bytes of the JSON', () => {
  const base = { userId: 'u', event: 'e', messageId: 'fixed-id', timestamp: '2026-01-01T00:00:00.000Z' }
  const library = { library: { name: 'tracklet', version: '0.1.0' } }
  const emptyBytes = Buffer.byteLength(
    JSON.stringify({ ...base, properties: { pad: '' }, type: 'track', context: library }),
  )

  /** Tracks a message padded with `count` × `char`; resolves with its settlement and its size in bytes. */
  function trackPadded(
    char: string,
    count: number,
  ): { bytes: number; result: Promise<{ err: AnalyticsError | undefined }> } {
    const { callback, result } = settled()
    analytics.track({ ...base, properties: { pad: char.repeat(count) } }, callback)
    return { bytes: emptyBytes + count * Buffer.byteLength(char), result }
  }

  it.each([
    ['ASCII', 'a'],
    ['3-byte characters', '€'],
  ])('accepts %s just under the limit, refuses one character over', async (_name, char) => {
    const count = Math.floor((MAX_MESSAGE_BYTES - emptyBytes) / Buffer.byteLength(char))
    const under = trackPadded(char, count)
    const over = trackPadded(char, count + 1)
    expect(under.bytes).toBeLessThanOrEqual(MAX_MESSAGE_BYTES)
    expect(MAX_MESSAGE_BYTES - under.bytes).toBeLessThan(Buffer.byteLength(char))
    if (char === 'a') expect(under.bytes).toBe(MAX_MESSAGE_BYTES)
    await analytics.flush()
    expect((await under.result).err).toBeUndefined()
    const { err } = await over.result
    expect(err?.code).toBe('ERR_MESSAGE_TOO_LARGE')
    expect(err?.message).toBe(`track message is ${over.bytes} bytes of JSON, over the 32000-byte limit`)
    expect(api.messages().map((message) => Buffer.byteLength(JSON.stringify(message)))).toEqual([under.bytes])
  })

  it('refuses multi-byte text whose character count is far under the limit', async () => {
    const { callback, result } = settled()
    // 11,000 characters, 33,000 bytes.
    analytics.track({ userId: 'u', event: 'e', properties: { text: '€'.repeat(11_000) } }, callback)
    expect((await result).err?.code).toBe('ERR_MESSAGE_TOO_LARGE')
  })
})
