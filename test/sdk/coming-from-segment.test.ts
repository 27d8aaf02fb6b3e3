import { afterEach, describe, expect, it, vi } from 'vitest'
import { Analytics } from '../../src/index'
import { PauseGate } from '../../src/sdk/pause-gate'
import { waitFor } from '../support/wait-for'
import { type Receiver, startReceiver, status } from './helpers/receiver'
import { settled } from './helpers/settle'

// Segment's users' code, as they write it, against a real node:http tracking API on port 0.

let receiver: Receiver | undefined
let analytics: Analytics | undefined

afterEach(async () => {
  vi.useRealTimers()
  vi.restoreAllMocks()
  await analytics?.closeAndFlush({ timeout: 1000 })
  analytics = undefined
  await receiver?.close()
  receiver = undefined
})

describe("Segment's constructor and options", () => {
  it('new Analytics({ writeKey, host, path, maxEventsInBatch }) posts to host + path with the key', async () => {
    receiver = await startReceiver()
    analytics = new Analytics({
      writeKey: 'seg-key',
      host: `${receiver.endpoint}/`,
      path: '/custom/batch',
      maxEventsInBatch: 2,
    })
    analytics.track({ userId: 'u', event: 'one' })
    analytics.track({ userId: 'u', event: 'two' })
    await analytics.flush()
    expect(receiver.requests).toHaveLength(1)
    expect(receiver.requests[0]!.url).toBe('/custom/batch')
    expect(receiver.requests[0]!.headers.authorization).toBe(`Basic ${Buffer.from('seg-key:').toString('base64')}`)
    expect(receiver.messages().map((m) => m.event)).toEqual(['one', 'two'])
  })

  it("sends to endpoint + /v1/batch when no path is given, as Segment's libraries do", async () => {
    receiver = await startReceiver()
    analytics = new Analytics('k', { host: receiver.endpoint, flushAt: 1 })
    const { callback, result } = settled()
    analytics.track({ userId: 'u', event: 'e' }, callback)
    expect((await result).err).toBeUndefined()
    expect(receiver.requests[0]!.url).toBe('/v1/batch')
  })

  it('a misspelt host throws, instead of sending to the default endpoint', () => {
    expect(() => new Analytics('k', { hots: 'http://127.0.0.1:8787' } as never)).toThrow(
      new TypeError('unknown option `hots` (did you mean `host`?)'),
    )
  })

  it('flushAt: 0 sends every call at once, like flushAt: 1', async () => {
    receiver = await startReceiver()
    analytics = new Analytics('k', { endpoint: receiver.endpoint, flushAt: 0 })
    const { callback, result } = settled()
    analytics.track({ userId: 'u', event: 'e' }, callback)
    expect((await result).err).toBeUndefined()
    expect(receiver.requests).toHaveLength(1)
  })
})

describe('disable: true', () => {
  it('validates calls, settles valid ones as delivered, sends nothing, and says so in stats()', async () => {
    receiver = await startReceiver()
    analytics = new Analytics('k', { endpoint: receiver.endpoint, flushAt: 1, disable: true })
    const ok = settled()
    const bad = settled()
    analytics.track({ userId: 'u', event: 'e', properties: { plan: 'pro' } }, ok.callback)
    analytics.track({ userId: 'u' } as never, bad.callback)
    const delivered = await ok.result
    expect(delivered.err).toBeUndefined()
    expect(delivered.message).toMatchObject({ type: 'track', event: 'e', properties: { plan: 'pro' } })
    expect((await bad.result).err?.code).toBe('ERR_INVALID_MESSAGE')
    await analytics.flush()
    await analytics.closeAndFlush()
    expect(analytics.stats()).toEqual({
      queued: 0,
      inFlight: 0,
      delivered: 1,
      failed: 1,
      filtered: 0,
      requests: 0,
      retries: 0,
      bytesSent: 0,
      disabled: true,
    })
    expect(receiver.requests).toHaveLength(0)
  })

  it('is absent from stats() of a client that sends', () => {
    analytics = new Analytics('k', { endpoint: 'http://127.0.0.1:9' })
    expect(analytics.stats()).not.toHaveProperty('disabled')
  })
})

describe("the classic library's numeric ids", () => {
  it('sends a finite number userId, anonymousId, groupId or previousId as its decimal string', async () => {
    receiver = await startReceiver()
    analytics = new Analytics('k', { endpoint: receiver.endpoint })
    const track = { userId: 42, anonymousId: 7.5, event: 'e' }
    analytics.track(track as never)
    analytics.group({ userId: 1e21, groupId: -3 } as never)
    analytics.alias({ previousId: 0, userId: 2 ** 53 } as never)
    await analytics.flush()
    const [t, g, a] = receiver.messages()
    expect(t).toMatchObject({ userId: '42', anonymousId: '7.5' })
    expect(g).toMatchObject({ userId: '1000000000000000000000', groupId: '-3' })
    expect(a).toMatchObject({ previousId: '0', userId: '9007199254740992' })
    // The caller's object is left as it was.
    expect(track.userId).toBe(42)
  })

  it.each([
    [{ userId: Number.NaN, event: 'e' }, 'userId must be a non-empty string, got number NaN'],
    [{ userId: Number.POSITIVE_INFINITY, event: 'e' }, 'userId must be a non-empty string, got number Infinity'],
    [{ userId: true, event: 'e' }, 'userId must be a non-empty string, got boolean true'],
    [{ userId: { id: 1 }, event: 'e' }, 'userId must be a non-empty string, got an object'],
  ])('still refuses other non-strings: %o', async (fields, problem) => {
    analytics = new Analytics('k', { endpoint: 'http://127.0.0.1:9' })
    const { callback, result } = settled()
    analytics.track(fields as never, callback)
    const { err } = await result
    expect(err?.code).toBe('ERR_INVALID_MESSAGE')
    expect(err?.message).toContain(problem)
  })
})

describe('Retry-After', () => {
  it('holds every batch of the client until it passes, then delivers them all, none lost', async () => {
    receiver = await startReceiver((request, response, index) =>
      index === 0 ? status(429, { 'retry-after': '1' })(request, response, index) : response.end('{}'),
    )
    // Only the timers are fake: the sockets are real.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
    const pause = vi.spyOn(PauseGate.prototype, 'pause')
    analytics = new Analytics('k', { endpoint: receiver.endpoint, flushAt: 1 })
    const results = ['first', 'second', 'third', 'fourth', 'fifth'].map(() => settled())
    analytics.track({ userId: 'u', event: 'first' }, results[0]!.callback)
    // Until the client has read the 429 and paused (not vi.waitFor: it would advance the clock).
    while (pause.mock.calls.length === 0) await new Promise((resolve) => setImmediate(resolve))
    expect(pause).toHaveBeenCalledWith(1000)
    for (const [i, event] of ['second', 'third', 'fourth', 'fifth'].entries()) {
      analytics.track({ userId: 'u', event }, results[i + 1]!.callback)
    }
    await vi.advanceTimersByTimeAsync(999)
    for (let i = 0; i < 200; i++) await new Promise((resolve) => setImmediate(resolve))
    expect(receiver.requests).toHaveLength(1)
    await vi.advanceTimersByTimeAsync(1)
    vi.useRealTimers()
    await waitFor(() => (receiver!.requests.length === 6 ? true : undefined), 'the held batches')
    for (const { result } of results) expect((await result).err).toBeUndefined()
    const events = receiver.requests.slice(1).map((request) => request.json.batch[0]!.event)
    expect(events.sort()).toEqual(['fifth', 'first', 'fourth', 'second', 'third'])
    expect(analytics.stats()).toMatchObject({ delivered: 5, failed: 0, queued: 0, inFlight: 0 })
  })
})
