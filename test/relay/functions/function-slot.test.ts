import { afterEach, describe, expect, it } from 'vitest'
import type { DeliveryStep, StepVerdict } from '../../../src/relay/delivery/delivery-step'
import { openSqliteStore } from '../../../src/relay/store/sqlite/sqlite-store'
import { WebhookDestination } from '../../../src/webhooks/index'
import { retries, testWorker } from '../fixtures/worker'
import { countingReceiver, delivery, frozenClock, POLICY } from '../delivery/breaker-helpers'
import { waitFor } from '../helpers'

const cleanups: (() => Promise<void>)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

// A function runs before its delivery takes a URL's slot (docs/functions.md): one that loops until
// functionTimeout holds its own source's slot, never the URL another source shares.
describe("a destination's function and the URL's in-flight slots", () => {
  it("lets another source's deliveries to the same URL all go while one source's call is still running", async () => {
    const receiver = await countingReceiver()
    const store = await openSqliteStore(':memory:', frozenClock().now)
    cleanups.push(
      () => receiver.close(),
      () => store.close(),
    )
    const destination = () => new Map([['Webhooks', new WebhookDestination({ webhooks: [{ url: receiver.url }] })]])
    // Source `looping`'s call never ends until the test ends it (as a loop runs until its timeout).
    let endCall: ((verdict: StepVerdict) => void) | undefined
    const calls: string[] = []
    const step: DeliveryStep = {
      of: (source) =>
        source !== 'looping'
          ? undefined
          : (message) => {
              calls.push(String(message.messageId))
              return new Promise<StepVerdict>((resolve) => (endCall = resolve))
            },
    }
    const worker = testWorker({
      store,
      destinations: new Map([
        ['looping', destination()],
        ['web', destination()],
      ]),
      retries: retries(),
      concurrency: 4,
      now: frozenClock().now,
      // One request at a time to the URL: a call holding the slot would stall every other delivery.
      breaker: { ...POLICY, maxInFlightPerUrl: 1, circuits: store.circuits, random: () => 0 },
      step,
    })
    cleanups.push(() => worker.stop(100))

    await store.enqueue([delivery('looping', 'm-looping')])
    worker.wake()
    await waitFor(() => (calls.length === 1 ? true : undefined), "the looping source's call under way")
    await store.enqueue(Array.from({ length: 5 }, (_, i) => delivery('web', `m-web-${i}`)))
    worker.wake()
    await waitFor(async () => {
      const web = (await store.list({ after: 0, limit: 100 })).filter((d) => d.source === 'web')
      return web.length === 5 && web.every((d) => d.status === 'delivered') ? true : undefined
    }, "the other source's five deliveries")
    // All five went while the call was still running: nothing of `looping` was sent or settled.
    expect(receiver.requests.sort()).toEqual(['m-web-0', 'm-web-1', 'm-web-2', 'm-web-3', 'm-web-4'])
    const looping = (await store.list({ after: 0, limit: 100 })).find((d) => d.source === 'looping')
    expect(looping).toMatchObject({ status: 'pending', attempts: [] })

    // The call ends: its delivery then takes the URL's slot and goes like any other.
    endCall!({ kind: 'send', message: { ...(looping!.message as object), event: 'Late' } as never })
    await waitFor(async () => {
      const row = (await store.list({ after: 0, limit: 100 })).find((d) => d.source === 'looping')
      return row?.status === 'delivered' ? row : undefined
    }, 'the looping delivery sent once its call ended')
    expect(receiver.requests).toContain('m-looping')
    expect(calls).toEqual(['m-looping'])
    expect(receiver.mostInFlight).toBe(1)
  })
})
