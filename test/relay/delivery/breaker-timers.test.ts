import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import type { SendsOne as Destination } from '../../../src/relay/destinations/webhooks/sender'
import { type DeliveryAttempt, RETRY_WINDOW_MS } from '../../../src/webhooks/index'
import { breakerSetup, T0 } from './breaker-helpers'

const URL_DOWN = 'https://down.example/hook'

/** A destination to one URL that answers with `answer()` and notes when each request went (fake time). */
function recording(answer: (call: number) => Partial<DeliveryAttempt>) {
  const sentAt: number[] = []
  const destination: Destination = {
    urls: [URL_DOWN],
    async send() {
      sentAt.push(Date.now())
      const attempt = { url: URL_DOWN, status: 503, ms: 1, ...answer(sentAt.length) }
      const ok = attempt.status !== undefined && attempt.status < 300
      return { ok, retryable: !ok, attempts: [attempt] }
    },
  }
  return { destination, sentAt }
}

beforeEach(() => {
  vi.useFakeTimers({ now: T0 })
})
afterEach(() => {
  vi.useRealTimers()
})

describe('the circuit breaker’s probes', () => {
  it('go one at a time at growing intervals, capped, and never before a Retry-After', async () => {
    // The 4th probe (the 5th request) is refused with Retry-After: 30 s.
    const { destination, sentAt } = recording((call) => (call === 5 ? { retryAfterMs: 30_000 } : {}))
    const setup = await breakerSetup({
      sources: { web: [URL_DOWN] },
      now: Date.now,
      policy: { failureThreshold: 1, probeInterval: 1000, maxProbeInterval: 8000, maxInFlightPerUrl: 1 },
      destination: () => destination,
    })
    const worker = setup.worker()
    await setup.enqueue('web', 20)
    worker.wake()
    await vi.advanceTimersByTimeAsync(2 * 60 * 1000)
    await worker.stop(0)

    const gaps = sentAt.slice(1).map((at, i) => at - sentAt[i]!)
    // The first request opens the circuit (once written, a moment later); then probes 1, 2, 4,
    // 8 s apart (the cap); the Retry-After holds the next one back 30 s; then 8 s again.
    expect(gaps[0]).toBeGreaterThanOrEqual(1000)
    expect(gaps[0]).toBeLessThan(1010)
    expect(gaps.slice(1, 7)).toEqual([2000, 4000, 8000, 30_000, 8000, 8000])
    expect(gaps.slice(7).every((gap) => gap === 8000)).toBe(true)
  })

  it('are spread by jitter: up to a fifth of the interval earlier', async () => {
    const { destination, sentAt } = recording(() => ({}))
    const setup = await breakerSetup({
      sources: { web: [URL_DOWN] },
      now: Date.now,
      policy: { failureThreshold: 1, probeInterval: 1000, maxProbeInterval: 1000, maxInFlightPerUrl: 1 },
      destination: () => destination,
      random: () => 0.5,
    })
    const worker = setup.worker()
    await setup.enqueue('web', 1)
    worker.wake()
    await vi.advanceTimersByTimeAsync(5000)
    await worker.stop(0)
    const gaps = sentAt.slice(1).map((at, i) => at - sentAt[i]!)
    expect(gaps[0]).toBeGreaterThanOrEqual(900)
    expect(gaps[0]).toBeLessThan(910)
    expect(gaps.slice(1)).toEqual([900, 900, 900, 900])
  })
})

describe('the retry window with the circuit open', () => {
  it('dead-letters every delivery with the last error once its four hours are spent, attempted or not', async () => {
    const { destination, sentAt } = recording(() => ({}))
    const setup = await breakerSetup({
      sources: { web: [URL_DOWN] },
      now: Date.now,
      policy: { failureThreshold: 1, probeInterval: 3_600_000, maxProbeInterval: 3_600_000, maxInFlightPerUrl: 1 },
      destination: () => destination,
    })
    const worker = setup.worker()
    await setup.enqueue('web', 10)
    worker.wake()
    await vi.advanceTimersByTimeAsync(RETRY_WINDOW_MS - 1000)
    expect((await setup.log()).map((d) => d.status)).toEqual(Array(10).fill('pending'))

    await vi.advanceTimersByTimeAsync(2000)
    const log = await setup.log()
    expect(log.map((d) => d.status)).toEqual(Array(10).fill('failed'))
    for (const d of log) expect(d.lastError).toBe(`retry window spent; last error: ${URL_DOWN}: HTTP 503`)
    // The first request opened the circuit; then a probe an hour: most were never attempted.
    expect(sentAt.length).toBeLessThanOrEqual(5)
    expect(log.filter((d) => d.attempts.length === 0).length).toBeGreaterThanOrEqual(5)
    // Dead-lettered when their window ended, not later.
    for (const d of log) expect(Date.parse(d.updatedAt)).toBeLessThanOrEqual(T0 + RETRY_WINDOW_MS + 1000)
    await worker.stop(0)
  })
})
