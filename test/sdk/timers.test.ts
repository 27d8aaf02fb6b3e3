import { MockAgent } from 'undici'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { Analytics } from '../../src/index'
import { settled } from './helpers/settle'

const ENDPOINT = 'http://api.test'

interface Answer {
  status: number
  headers?: Record<string, string>
  /** Milliseconds before the answer (driven by the fake clock). */
  delay?: number
}

let agent: MockAgent
let requests: string[]

/** A MockAgent answering each request with the next of `answers` (the last one repeats). */
function answerWith(...answers: Answer[]): MockAgent {
  agent = new MockAgent()
  agent.disableNetConnect()
  const pool = agent.get(ENDPOINT)
  for (let i = 0; i < 50; i++) {
    const answer = answers[Math.min(i, answers.length - 1)]!
    const scope = pool.intercept({ path: '/v1/batch', method: 'POST' }).reply(
      answer.status,
      (options) => {
        requests.push(String(options.body))
        return {}
      },
      { headers: answer.headers ?? {} },
    )
    if (answer.delay !== undefined) scope.delay(answer.delay)
  }
  return agent
}

beforeEach(() => {
  requests = []
  vi.useFakeTimers()
  vi.spyOn(Math, 'random').mockReturnValue(0)
})

afterEach(async () => {
  vi.useRealTimers()
  await agent.close()
})

describe('with fake timers', () => {
  it('sends what is queued flushInterval after the last flush', async () => {
    const analytics = new Analytics('k', {
      endpoint: ENDPOINT,
      dispatcher: answerWith({ status: 200 }),
      flushInterval: 5000,
    })
    analytics.track({ userId: 'u', event: 'one' })
    await vi.advanceTimersByTimeAsync(4999)
    expect(requests).toHaveLength(0)
    await vi.advanceTimersByTimeAsync(1)
    expect(requests).toHaveLength(1)
    // The next message waits its own full interval, counted from the flush.
    analytics.track({ userId: 'u', event: 'two' })
    await vi.advanceTimersByTimeAsync(4999)
    expect(requests).toHaveLength(1)
    await vi.advanceTimersByTimeAsync(1)
    expect(requests).toHaveLength(2)
    await analytics.closeAndFlush()
  })

  it('counts the interval from the last flush, not from when a message was queued', async () => {
    const analytics = new Analytics('k', {
      endpoint: ENDPOINT,
      dispatcher: answerWith({ status: 200 }),
      flushInterval: 5000,
    })
    // Queued 4 s after the client was made (its start counts as the last flush): sent 1 s later.
    await vi.advanceTimersByTimeAsync(4000)
    analytics.track({ userId: 'u', event: 'late in the interval' })
    await vi.advanceTimersByTimeAsync(999)
    expect(requests).toHaveLength(0)
    await vi.advanceTimersByTimeAsync(1)
    expect(requests).toHaveLength(1)
    // An explicit flush restarts the interval.
    await vi.advanceTimersByTimeAsync(3000)
    await analytics.flush()
    analytics.track({ userId: 'u', event: 'after a flush' })
    await vi.advanceTimersByTimeAsync(4999)
    expect(requests).toHaveLength(1)
    await vi.advanceTimersByTimeAsync(1)
    expect(requests).toHaveLength(2)
    // After a quiet spell longer than the interval, what is queued goes at once.
    await vi.advanceTimersByTimeAsync(60_000)
    analytics.track({ userId: 'u', event: 'after a quiet minute' })
    await vi.advanceTimersByTimeAsync(0)
    expect(requests).toHaveLength(3)
    await analytics.closeAndFlush()
  })

  it('accepts flushAfter as the interval', async () => {
    const analytics = new Analytics('k', {
      endpoint: ENDPOINT,
      dispatcher: answerWith({ status: 200 }),
      flushAfter: 100,
    })
    analytics.track({ userId: 'u', event: 'one' })
    await vi.advanceTimersByTimeAsync(100)
    expect(requests).toHaveLength(1)
    await analytics.closeAndFlush()
  })

  it('backs off exponentially between retries, up to maxRetries', async () => {
    const analytics = new Analytics('k', { endpoint: ENDPOINT, dispatcher: answerWith({ status: 503 }), maxRetries: 3 })
    const { callback, result } = settled()
    analytics.track({ userId: 'u', event: 'e' }, callback)
    void analytics.flush()
    await vi.advanceTimersByTimeAsync(0)
    expect(requests).toHaveLength(1)
    // Math.random() = 0: each backoff is half its ceiling: 125, 250, 500 ms.
    for (const [delay, count] of [
      [125, 2],
      [250, 3],
      [500, 4],
    ] as const) {
      await vi.advanceTimersByTimeAsync(delay - 1)
      expect(requests).toHaveLength(count - 1)
      await vi.advanceTimersByTimeAsync(1)
      expect(requests).toHaveLength(count)
    }
    const { err } = await result
    expect(err).toMatchObject({ code: 'ERR_DELIVERY', status: 503, attempts: 4 })
    expect(err?.message).toMatch(/HTTP 503; gave up after 4 attempts$/)
    await vi.advanceTimersByTimeAsync(60_000)
    expect(requests).toHaveLength(4)
    await analytics.closeAndFlush()
  })

  it('honours Retry-After, clamped to 30 s, within the 60 s total', async () => {
    const dispatcher = answerWith(
      { status: 429, headers: { 'retry-after': '3' } },
      { status: 503, headers: { 'retry-after': '3600' } },
    )
    const analytics = new Analytics('k', { endpoint: ENDPOINT, dispatcher, maxRetries: 10 })
    const { callback, result } = settled()
    analytics.track({ userId: 'u', event: 'e' }, callback)
    void analytics.flush()
    await vi.advanceTimersByTimeAsync(2999)
    expect(requests).toHaveLength(1)
    await vi.advanceTimersByTimeAsync(1)
    expect(requests).toHaveLength(2)
    // "3600" is clamped to 30 s.
    await vi.advanceTimersByTimeAsync(29_999)
    expect(requests).toHaveLength(2)
    await vi.advanceTimersByTimeAsync(1)
    expect(requests).toHaveLength(3)
    // At 33 s another 30 s would pass the 60 s cap: the message fails now.
    const { err } = await result
    expect(err).toMatchObject({ code: 'ERR_DELIVERY', status: 503, attempts: 3 })
    expect(
      new Set(requests.map((body) => (JSON.parse(body) as { batch: { messageId: string }[] }).batch[0]!.messageId))
        .size,
    ).toBe(1)
    await analytics.closeAndFlush()
  })

  it('a Retry-After holds every batch of the client, then they go in the order they were made', async () => {
    const dispatcher = answerWith({ status: 429, headers: { 'retry-after': '2' } }, { status: 200 })
    const analytics = new Analytics('k', { endpoint: ENDPOINT, dispatcher, flushAt: 1 })
    analytics.track({ userId: 'u', event: 'e0' })
    await vi.advanceTimersByTimeAsync(10)
    expect(requests).toHaveLength(1)
    // Six more batches, more than the requests allowed in flight at once.
    for (let i = 1; i <= 6; i++) analytics.track({ userId: 'u', event: `e${i}` })
    await vi.advanceTimersByTimeAsync(1989)
    expect(requests).toHaveLength(1)
    await vi.advanceTimersByTimeAsync(1)
    await analytics.flush()
    const events = requests.map((body) => (JSON.parse(body) as { batch: { event: string }[] }).batch[0]!.event)
    expect(events).toEqual(['e0', 'e0', 'e1', 'e2', 'e3', 'e4', 'e5', 'e6'])
    expect(analytics.stats()).toMatchObject({ delivered: 7, failed: 0 })
    await analytics.closeAndFlush()
  })

  it('aborts a request after timeout and retries it', async () => {
    const dispatcher = answerWith({ status: 200, delay: 60_000 }, { status: 200 })
    const analytics = new Analytics('k', { endpoint: ENDPOINT, dispatcher, timeout: 1000 })
    const { callback, result } = settled()
    analytics.track({ userId: 'u', event: 'e' }, callback)
    void analytics.flush()
    await vi.advanceTimersByTimeAsync(1000 + 125)
    expect((await result).err).toBeUndefined()
    expect(analytics.stats()).toMatchObject({ delivered: 1, failed: 0 })
    await analytics.closeAndFlush()
  })

  it('closeAndFlush({ timeout }) resolves by the timeout during a long backoff, failing with ERR_CLOSED', async () => {
    const dispatcher = answerWith({ status: 503, headers: { 'retry-after': '20' } })
    const analytics = new Analytics('k', { endpoint: ENDPOINT, dispatcher })
    const { callback, result } = settled()
    analytics.track({ userId: 'u', event: 'e' }, callback)
    let closed = false
    void analytics.closeAndFlush({ timeout: 2000 }).then(() => (closed = true))
    await vi.advanceTimersByTimeAsync(1999)
    expect(closed).toBe(false)
    await vi.advanceTimersByTimeAsync(1)
    expect(closed).toBe(true)
    expect((await result).err?.code).toBe('ERR_CLOSED')
    expect(requests).toHaveLength(1)
    expect(vi.getTimerCount()).toBe(0)
  })

  it('closeAndFlush({ timeout }) with a large backlog and the endpoint down fails each message once, at the deadline', async () => {
    // No intercepts and no network: every request fails at once, as with an endpoint that is down.
    agent = new MockAgent()
    agent.disableNetConnect()
    const analytics = new Analytics('k', { endpoint: ENDPOINT, dispatcher: agent })
    const MESSAGES = 20_000
    const calls = new Uint8Array(MESSAGES)
    const codes = new Set<string>()
    for (let i = 0; i < MESSAGES; i++) {
      analytics.track({ userId: 'u', event: `e${i}` }, (error) => {
        calls[i]! += 1
        codes.add(error?.code ?? 'delivered')
      })
    }
    const start = Date.now()
    let closedAt: number | undefined
    void analytics.closeAndFlush({ timeout: 3000 }).then(() => (closedAt = Date.now()))
    // Math.random is 0: retries at 125, 375, 875 and 1875 ms; the next would be past the deadline.
    await vi.advanceTimersByTimeAsync(2999)
    expect(closedAt).toBeUndefined()
    expect(calls.every((count) => count === 0)).toBe(true)

    await vi.advanceTimersByTimeAsync(1)
    expect(closedAt! - start).toBe(3000)
    expect(calls.every((count) => count === 1)).toBe(true)
    expect([...codes]).toEqual(['ERR_CLOSED'])
    expect(analytics.stats()).toMatchObject({ queued: 0, inFlight: 0, delivered: 0, failed: MESSAGES })
  })

  it('fails a backlog at the deadline without per-message stack traces, and without parsing unobserved messages', async () => {
    agent = new MockAgent()
    agent.disableNetConnect()
    const analytics = new Analytics('k', { endpoint: ENDPOINT, dispatcher: agent })
    const { callback, result } = settled()
    analytics.track({ userId: 'u', event: 'observed' }, callback)
    for (let i = 0; i < 1000; i++) analytics.track({ userId: 'u', event: `fire-and-forget ${i}` })
    void analytics.closeAndFlush({ timeout: 3000 })
    await vi.advanceTimersByTimeAsync(2999)
    const parse = vi.spyOn(JSON, 'parse')
    await vi.advanceTimersByTimeAsync(1)

    const { err } = await result
    expect(err?.code).toBe('ERR_CLOSED')
    // Its stack would show only the client's own frames: capturing 100,000 of them overran the
    // deadline by a second. The message says what happened.
    expect(err?.stack).toBe(`ClosedError: ${err?.message}`)
    // Only the message with a callback was read back: nobody would see the others' errors.
    expect(parse).toHaveBeenCalledTimes(1)
    expect(analytics.stats().failed).toBe(1001)
  })
})
