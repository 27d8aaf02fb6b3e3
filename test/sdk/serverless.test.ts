import { MockAgent } from 'undici'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { Analytics, type AnalyticsError } from '../../src/index'
import { settled } from './helpers/settle'

const ENDPOINT = 'http://api.test'

let agent: MockAgent | undefined
let requests: { body: string; at: number }[]

/** A MockAgent answering every request with `status` after `delay` ms (driven by the fake clock). */
function answering(status: number, delay = 0, body = '{}'): MockAgent {
  agent = new MockAgent()
  agent.disableNetConnect()
  const scope = agent
    .get(ENDPOINT)
    .intercept({ path: '/v1/batch', method: 'POST' })
    .reply(status, (options) => {
      requests.push({ body: String(options.body), at: Date.now() })
      return body
    })
    .persist()
  if (delay > 0) scope.delay(delay)
  return agent
}

afterEach(async () => {
  vi.useRealTimers()
  await agent?.close()
  agent = undefined
})

function batches(): string[][] {
  return requests.map(({ body }) => (JSON.parse(body) as { batch: { event: string }[] }).batch.map((m) => m.event))
}

describe('flush({ timeout })', () => {
  it('resolves by its timeout while a batch is still in flight, which settles later, delivered', async () => {
    vi.useFakeTimers()
    requests = []
    const analytics = new Analytics('k', { endpoint: ENDPOINT, dispatcher: answering(200, 5000) })
    const { callback, result } = settled()
    analytics.track({ userId: 'u', event: 'slow' }, callback)
    let flushed = false
    void analytics.flush({ timeout: 1000 }).then(() => (flushed = true))
    await vi.advanceTimersByTimeAsync(999)
    expect(flushed).toBe(false)
    await vi.advanceTimersByTimeAsync(1)
    expect(flushed).toBe(true)
    // Nothing was failed by it: the request goes on and the message is delivered.
    expect(analytics.stats()).toMatchObject({ inFlight: 1, failed: 0 })
    await vi.advanceTimersByTimeAsync(4000)
    expect((await result).err).toBeUndefined()
    expect(analytics.stats()).toMatchObject({ inFlight: 0, delivered: 1 })
  })

  it('resolves as soon as everything has settled, well before a long timeout', async () => {
    vi.useFakeTimers()
    requests = []
    const analytics = new Analytics('k', { endpoint: ENDPOINT, dispatcher: answering(200, 10) })
    analytics.track({ userId: 'u', event: 'quick' })
    let flushed = false
    void analytics.flush({ timeout: 60_000 }).then(() => (flushed = true))
    await vi.advanceTimersByTimeAsync(10)
    expect(flushed).toBe(true)
  })

  it('refuses a timeout that is not a number of at least 0, as closeAndFlush does', () => {
    const analytics = new Analytics('k', { endpoint: ENDPOINT, dispatcher: answering(200) })
    expect(() => analytics.flush({ timeout: -1 })).toThrow(TypeError)
    expect(() => analytics.flush({ timeout: '5s' as never })).toThrow(/timeout must be a number of milliseconds/)
  })
})

describe('waitUntil', () => {
  it('sends what one turn queued at the end of that turn, and hands over a promise per batch that settles with it', async () => {
    requests = []
    const handed: Promise<void>[] = []
    const analytics = new Analytics('k', {
      endpoint: ENDPOINT,
      dispatcher: answering(200),
      // flushAt and flushInterval would otherwise hold these: an invocation must not end on them.
      flushAt: 100,
      flushInterval: 60_000,
      waitUntil: (promise) => handed.push(promise),
    })
    const first = settled()
    analytics.track({ userId: 'u', event: 'a' }, first.callback)
    analytics.track({ userId: 'u', event: 'b' })
    expect(handed).toHaveLength(0) // not during the turn
    await Promise.resolve()
    expect(handed).toHaveLength(1)
    await handed[0]
    // Settled with the batch: the callback has been told by the time the promise resolves.
    expect(batches()).toEqual([['a', 'b']])
    expect((await first.result).err).toBeUndefined()

    analytics.track({ userId: 'u', event: 'c' })
    await Promise.resolve()
    expect(handed).toHaveLength(2)
    await handed[1]
    expect(batches()).toEqual([['a', 'b'], ['c']])
  })

  it('hands over a promise that resolves, never rejects, when the batch fails; a waitUntil that throws changes nothing', async () => {
    requests = []
    const handed: Promise<void>[] = []
    const analytics = new Analytics('k', {
      endpoint: ENDPOINT,
      dispatcher: answering(400, 0, '{"error":{"code":"ERR_BAD","message":"bad batch"}}'),
      waitUntil: (promise) => {
        handed.push(promise)
        throw new Error('the invocation is over')
      },
    })
    const { callback, result } = settled()
    analytics.track({ userId: 'u', event: 'refused' }, callback)
    await Promise.resolve()
    await expect(handed[0]).resolves.toBeUndefined()
    expect((await result).err?.code).toBe('ERR_DELIVERY')
  })
})

describe('maxRequestsPerSecond', () => {
  it('starts at most that many batch requests per second', async () => {
    vi.useFakeTimers()
    requests = []
    const analytics = new Analytics('k', {
      endpoint: ENDPOINT,
      dispatcher: answering(200),
      flushAt: 1,
      maxRequestsPerSecond: 2,
    })
    for (const event of ['1', '2', '3', '4', '5']) analytics.track({ userId: 'u', event })
    await vi.advanceTimersByTimeAsync(10)
    expect(requests).toHaveLength(2)
    await vi.advanceTimersByTimeAsync(1000)
    expect(requests).toHaveLength(4)
    await vi.advanceTimersByTimeAsync(1000)
    expect(requests).toHaveLength(5)
  })

  it('is refused at construction unless it is a whole number of at least 1', () => {
    expect(() => new Analytics('k', { maxRequestsPerSecond: 0 })).toThrow(
      /^maxRequestsPerSecond must be an integer of at least 1, got number 0$/,
    )
  })
})

describe('a refused batch', () => {
  it("carries the API's own code and reason, and is emitted once for the whole batch", async () => {
    requests = []
    const analytics = new Analytics('wrong-key', {
      endpoint: ENDPOINT,
      dispatcher: answering(401, 0, '{"error":{"code":"ERR_UNAUTHORIZED","message":"unknown write key"}}'),
    })
    const errors: AnalyticsError[] = []
    analytics.on('error', (error) => errors.push(error))
    const calls = ['a', 'b', 'c'].map((event) => {
      const { callback, result } = settled()
      analytics.track({ userId: 'u', event }, callback)
      return result
    })
    await analytics.flush()
    expect(errors).toHaveLength(1)
    const [error] = errors
    expect(error).toMatchObject({
      code: 'ERR_DELIVERY',
      status: 401,
      apiError: { code: 'ERR_UNAUTHORIZED', message: 'unknown write key' },
    })
    expect(error!.message).toBe(
      `delivery failed: POST ${ENDPOINT}/v1/batch: HTTP 401: unknown write key (ERR_UNAUTHORIZED)`,
    )
    expect(error!.messages.map((message) => message.event)).toEqual(['a', 'b', 'c'])
    // Each callback still hears of its own message.
    for (const [i, call] of (await Promise.all(calls)).entries()) {
      expect(call.err?.analyticsMessage.event).toBe(['a', 'b', 'c'][i])
      expect(call.err?.message).toBe(error!.message)
    }
  })
})
