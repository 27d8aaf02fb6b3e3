import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import type { DestinationSender } from '../../../src/relay/delivery/destination'
import { Worker } from '../../../src/relay/delivery/worker'
import type { TargetLimits } from '../../../src/relay/destinations/destination'
import type { SendsOne } from '../../../src/relay/destinations/webhooks/sender'
import { openSqliteStore, type SqliteStore } from '../../../src/relay/store/sqlite/sqlite-store'
import { type DeliveryAttempt, RETRY_WINDOW_MS } from '../../../src/webhooks/index'
import { delivery, POLICY, T0 } from '../delivery/breaker-helpers'
import { retries, senderOf } from '../fixtures/worker'

// The per-URL limits on every path a delivery takes (docs/delivery-controls.md): the breaker's
// probe waits for room like any delivery, and what waits is counted until it leaves, however it
// leaves (delivered, parked behind an open circuit, dead-lettered, the worker stopped). Fake
// timers over an in-memory store: the clock moves only when the test moves it.

const URL = 'https://limited.example/hook'

/** A destination to URL that answers `answer(call)` (1-based) and notes each message sent. */
function limited(limits: TargetLimits, answer: (call: number) => Partial<DeliveryAttempt>) {
  const sent: string[] = []
  const fake: SendsOne = {
    urls: [URL],
    async send(message) {
      sent.push(message.messageId!)
      const attempt = { url: URL, status: 200, ms: 1, ...answer(sent.length) }
      const ok = attempt.status !== undefined && attempt.status < 300
      return { ok, retryable: !ok, attempts: [attempt] }
    },
  }
  const sender: DestinationSender = { ...senderOf(fake), limits: new Map([[URL, limits]]) }
  return { sender, sent }
}

let store: SqliteStore
beforeEach(async () => {
  vi.useFakeTimers({ now: T0 })
  store = await openSqliteStore(':memory:', Date.now)
})
afterEach(async () => {
  vi.useRealTimers()
  await store.close()
})

function workerOf(sender: DestinationSender, policy: Partial<typeof POLICY> = {}, window = RETRY_WINDOW_MS) {
  return new Worker({
    store,
    destinations: new Map([['web', new Map([['Webhooks', sender]])]]),
    retries: { ...retries(), window },
    concurrency: 4,
    leaseTimeout: 30_000,
    owner: 'this-relay',
    now: Date.now,
    breaker: { ...POLICY, ...policy, circuits: store.circuits, random: () => 0 },
    limits: { store: store.endpointLimits, slotLeaseMs: 25_000 },
  })
}

const enqueue = (count: number) => store.enqueue(Array.from({ length: count }, (_, i) => delivery('web', `m-${i}`)))
const statuses = async () => (await store.list({ after: 0, limit: 100 })).map((d) => d.status)
const waiting = (worker: Worker) => worker.limits()[0]?.waiting

describe('the breaker’s probe under a URL’s limits', () => {
  it('waits for a slot another relay holds, neither sent nor failed meanwhile, then goes', async () => {
    const { sender, sent } = limited({ maxInFlight: 1 }, (call) => (call === 1 ? { status: 503 } : {}))
    const worker = workerOf(sender, { failureThreshold: 1, probeInterval: 5000, maxProbeInterval: 5000 })
    await enqueue(3)
    worker.wake()
    // The first request fails and opens the circuit; the slot it kept goes back within a second.
    await vi.advanceTimersByTimeAsync(2000)
    expect(sent).toHaveLength(1)
    expect((await store.endpointLimits.takeSlots(URL, 'another-relay', 1, 1, 60_000)).taken).toBe(1)

    // The probe falls due with no room: it waits, counted as held, and is no attempt.
    await vi.advanceTimersByTimeAsync(10_000)
    expect(sent).toHaveLength(1)
    expect(waiting(worker)).toBe(1)
    expect(worker.limits()[0]!.held.in_flight).toBeGreaterThanOrEqual(1)
    const log = await store.list({ after: 0, limit: 10 })
    expect(log.map((d) => d.status)).toEqual(['pending', 'pending', 'pending'])
    expect(log.flatMap((d) => d.attempts)).toHaveLength(1)

    // The other relay's request ends: the probe goes, answers, and the rest follow.
    await store.endpointLimits.returnSlots(URL, 'another-relay', 1)
    await vi.advanceTimersByTimeAsync(2000)
    expect(await statuses()).toEqual(['delivered', 'delivered', 'delivered'])
    expect(sent).toHaveLength(4)
    expect(waiting(worker)).toBe(0)
    await worker.stop(0)
  })
})

describe('a rate below one a second', () => {
  it('sends, one request at a time: its burst is one request, not less', async () => {
    const { sender, sent } = limited({ ratePerSecond: 0.5 }, () => ({}))
    const worker = workerOf(sender)
    await enqueue(3)
    worker.wake()
    await vi.advanceTimersByTimeAsync(100)
    expect(sent).toHaveLength(1)
    await vi.advanceTimersByTimeAsync(1800)
    expect(sent).toHaveLength(1)
    await vi.advanceTimersByTimeAsync(2300)
    expect(await statuses()).toEqual(['delivered', 'delivered', 'delivered'])
    await worker.stop(0)
  })
})

describe('tracklet_endpoint_waiting', () => {
  it('returns to 0 once the backlog is delivered', async () => {
    const { sender, sent } = limited({ maxInFlight: 1, ratePerSecond: 5 }, () => ({}))
    const worker = workerOf(sender)
    await enqueue(12)
    worker.wake()
    await vi.advanceTimersByTimeAsync(50)
    expect(waiting(worker)).toBeGreaterThan(0)
    await vi.advanceTimersByTimeAsync(5000)
    expect(await statuses()).toEqual(Array(12).fill('delivered'))
    expect(sent).toHaveLength(12)
    expect(waiting(worker)).toBe(0)
    await worker.stop(0)
  })

  it('returns to 0 when the waiting deliveries are parked behind an open circuit, then dead-lettered', async () => {
    const { sender } = limited({ maxInFlight: 1 }, () => ({ status: 503 }))
    // A retry window of a minute: the parked ones are dead-lettered when it ends.
    const hour = 3_600_000
    const worker = workerOf(sender, { failureThreshold: 1, probeInterval: hour, maxProbeInterval: hour }, 60_000)
    await enqueue(8)
    worker.wake()
    await vi.advanceTimersByTimeAsync(50)
    await vi.advanceTimersByTimeAsync(2000)
    // The first failed and opened the circuit: the others left the lane parked, not sent.
    expect(await statuses()).toEqual(Array(8).fill('pending'))
    expect(waiting(worker)).toBe(0)
    await vi.advanceTimersByTimeAsync(10 * 60_000)
    expect(await statuses()).toEqual(Array(8).fill('failed'))
    expect(waiting(worker)).toBe(0)
    await worker.stop(0)
  })

  it('returns to 0 when an operator pauses the URL they wait for', async () => {
    const { sender, sent } = limited({ ratePerSecond: 1 }, () => ({}))
    const worker = workerOf(sender)
    await enqueue(6)
    worker.wake()
    await vi.advanceTimersByTimeAsync(100)
    expect(sent).toHaveLength(1)
    expect(waiting(worker)).toBeGreaterThan(0)
    await store.circuits.pause(URL, Date.now())
    await worker.refreshCircuits([URL])
    await vi.advanceTimersByTimeAsync(3000)
    expect(sent).toHaveLength(1)
    expect(await statuses()).toEqual(['delivered', ...Array(5).fill('pending')])
    expect(waiting(worker)).toBe(0)
    await worker.stop(0)
  })

  it('returns to 0 when the worker stops with deliveries waiting', async () => {
    const { sender } = limited({ ratePerSecond: 1 }, () => ({}))
    const worker = workerOf(sender)
    await enqueue(8)
    worker.wake()
    await vi.advanceTimersByTimeAsync(100)
    expect(waiting(worker)).toBeGreaterThan(0)
    await worker.stop(0)
    expect(waiting(worker)).toBe(0)
  })
})
