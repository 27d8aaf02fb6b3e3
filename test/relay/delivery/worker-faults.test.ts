import { afterEach, describe, expect, it } from 'vitest'
import type { SendsOne as Destination } from '../../../src/relay/destinations/webhooks/sender'
import type { AttemptOutcome, Store } from '../../../src/relay/store/store'
import { type DeliveryResult, nextAttemptAt, type RetryState } from '../../../src/webhooks/index'
import { openTestStore, STORE_KINDS, type StoreKind } from '../../support/stores'
import { T0, testDelivery } from '../fixtures/deliveries'
import { retries, testWorker } from '../fixtures/worker'
const opened: Store[] = []

afterEach(async () => {
  for (const store of opened.splice(0)) await store.close()
})

const unavailable: DeliveryResult = {
  ok: false,
  retryable: true,
  attempts: [{ url: 'https://a.example/hook', status: 503, ms: 8 }],
}

/** A store whose `record` throws (a full disk, a lost connection) until `failures` is spent. */
function flaky(store: Store): Store & { failures: number; recordCalls: number } {
  const record = store.record.bind(store)
  const outbox = Object.assign(store, { failures: 0, recordCalls: 0 })
  outbox.record = async (outcomes: readonly AttemptOutcome[]): Promise<void> => {
    outbox.recordCalls++
    if (outbox.failures > 0) {
      outbox.failures--
      throw new Error('the database is unavailable')
    }
    await record(outcomes)
  }
  return outbox
}

/** A worker over an empty store with a frozen clock, one source `web`, and one pending delivery. */
async function setup(
  kind: StoreKind,
  destination: Destination,
  schedule: (state: RetryState) => number | undefined = (state) => nextAttemptAt(state, () => 0.5),
) {
  const outbox = flaky(await openTestStore(kind, () => T0))
  opened.push(outbox)
  const worker = testWorker({ store: outbox, destination, retries: retries(schedule), concurrency: 2, now: () => T0 })
  await outbox.enqueue([testDelivery('m1')])
  const delivery = async () => (await outbox.list({ after: 0, limit: 1 }))[0]!
  return { outbox, worker, delivery }
}

function counting(result: DeliveryResult): Destination & { sends: number } {
  const destination = {
    sends: 0,
    async send() {
      destination.sends++
      return result
    },
  }
  return destination
}

describe.each(STORE_KINDS)('on the %s store', (kind) => {
  describe('the worker, when handling an attempt’s outcome fails', () => {
    it('reschedules by its own backoff a delivery whose Retry-After is not a finite number', async () => {
      const destination = counting({ ...unavailable, retryAfterMs: Number.POSITIVE_INFINITY })
      const { worker, delivery } = await setup(kind, destination)
      worker.wake()
      await worker.idle()
      expect(destination.sends).toBe(1)
      // The backoff of a first failure with the jitter pinned to the middle: 0.75 s.
      expect(await delivery()).toMatchObject({
        status: 'pending',
        nextAttemptAt: new Date(T0 + 750).toISOString(),
        lastError: 'https://a.example/hook: HTTP 503',
      })
    })

    it('dead-letters the delivery with the error when the retry rule itself throws, and keeps working', async () => {
      const destination = counting(unavailable)
      const { worker, delivery, outbox } = await setup(kind, destination, () => {
        throw new RangeError('the schedule broke')
      })
      worker.wake()
      await worker.idle()
      expect(await delivery()).toMatchObject({ status: 'failed' })
      expect((await delivery()).lastError).toContain('the schedule broke')
      expect((await delivery()).attempts).toHaveLength(1)

      // The lane is free again: a new delivery is taken.
      await outbox.enqueue([testDelivery('m2')])
      worker.wake()
      await worker.idle()
      expect(destination.sends).toBe(2)
    })
  })

  describe('the worker, when writing outcomes fails', () => {
    it('keeps the outcome and writes it once the outbox recovers, without sending again meanwhile', async () => {
      const destination = counting(unavailable)
      const { worker, delivery, outbox } = await setup(kind, destination)
      outbox.failures = 3
      worker.wake()
      await worker.idle()
      expect(outbox.recordCalls).toBe(4)
      expect(destination.sends).toBe(1)
      expect(await delivery()).toMatchObject({
        status: 'pending',
        nextAttemptAt: new Date(T0 + 750).toISOString(),
        lastError: 'https://a.example/hook: HTTP 503',
      })
      expect((await delivery()).attempts).toHaveLength(1)
    })
  })
})
