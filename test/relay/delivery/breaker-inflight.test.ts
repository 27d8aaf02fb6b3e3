import type { ServerResponse } from 'node:http'
import { afterEach, describe, expect, it } from 'vitest'
import { breakerSetup, countingReceiver, frozenClock } from './breaker-helpers'
import { waitFor } from '../helpers'

const cleanups: (() => Promise<void>)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

describe('the limit on requests in flight per URL', () => {
  it('holds a slow receiver to the limit while other URLs and sources keep flowing', async () => {
    const slow = await countingReceiver()
    const fast = await countingReceiver()
    cleanups.push(
      () => slow.close(),
      () => fast.close(),
    )
    // The slow receiver answers nothing until the test lets it.
    const held: ServerResponse[] = []
    slow.respond((_req, res) => void held.push(res))
    const setup = await breakerSetup({
      sources: { slow: [slow.url], other: [slow.url], fast: [fast.url], both: [slow.url, fast.url] },
      now: frozenClock().now,
      concurrency: 16,
      policy: { maxInFlightPerUrl: 3 },
    })
    const worker = setup.worker()
    cleanups.push(async () => {
      await worker.stop(100)
      await setup.store.close()
    })
    await setup.enqueue('slow', 10)
    await setup.enqueue('other', 10)
    await setup.enqueue('fast', 10)
    await setup.enqueue('both', 10)
    worker.wake()

    // Two sources of 16 slots each send to the slow URL: it never holds more than 3.
    await waitFor(() => (slow.inFlight === 3 ? true : undefined), 'the slow receiver at its limit')
    // Meanwhile the fast URL takes every delivery of `fast`, and of `both` (its other URL is busy).
    await waitFor(async () => {
      const delivered = (await setup.log()).filter((d) => d.status === 'delivered')
      return delivered.length === 20 ? delivered : undefined
    }, 'the fast deliveries')
    expect(slow.inFlight).toBe(3)
    expect(worker.circuits().find((c) => c.url === slow.url)!.inFlight).toBe(3)
    const both = (await setup.log()).filter((d) => d.source === 'both')
    expect(both.map((d) => [d.status, d.attempts.map((a) => a.url)])).toEqual(Array(10).fill(['delivered', [fast.url]]))

    // The slow receiver answers from now on: the rest goes, never more than 3 at a time.
    slow.respond((_req, res) => void res.writeHead(200).end())
    for (const res of held.splice(0)) res.writeHead(200).end()
    await waitFor(async () => ((await setup.log()).every((d) => d.status === 'delivered') ? true : undefined))
    await worker.idle()
    expect(slow.mostInFlight).toBe(3)
    expect(new Set(slow.requests).size).toBe(20)
  })
})
