import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import type { DeliverableMessage } from '../../../src/shared/message'
import type { SendsOne as Destination } from '../../../src/relay/destinations/webhooks/sender'
import type { Store } from '../../../src/relay/store/store'
import { type DeliveryResult, nextAttemptAt, RETRY_WINDOW_MS } from '../../../src/webhooks/index'
import { newDatabase, openTestStore, STORE_KINDS, type StoreKind } from '../../support/stores'
import { T0, testDelivery } from '../fixtures/deliveries'
import { retries, testWorker } from '../fixtures/worker'

const LEASE_TIMEOUT = 30_000
const opened: Store[] = []

afterEach(async () => {
  for (const store of opened.splice(0)) await store.close()
})

/** A clock the test moves by hand. */
function clock() {
  let now = T0
  return { now: () => now, advance: (ms: number) => (now += ms) }
}

/** A destination that answers with `results` in turn (the last one repeats) and counts calls. */
function fakeDestination(...results: DeliveryResult[]): Destination & { sent: DeliverableMessage[] } {
  const sent: DeliverableMessage[] = []
  return {
    sent,
    async send(message) {
      sent.push(message)
      return results[Math.min(sent.length - 1, results.length - 1)]!
    },
  }
}

const ok: DeliveryResult = {
  ok: true,
  retryable: false,
  attempts: [{ url: 'https://a.example/hook', status: 200, ms: 12 }],
}
const unavailable: DeliveryResult = {
  ok: false,
  retryable: true,
  attempts: [{ url: 'https://a.example/hook', status: 503, ms: 8 }],
}
const refused: DeliveryResult = {
  ok: false,
  retryable: false,
  attempts: [{ url: 'https://a.example/hook', status: 404, ms: 5 }],
}

async function setup(
  kind: StoreKind,
  destination: Destination,
  options: { database?: string; concurrency?: number; realTime?: boolean; startAt?: number } = {},
) {
  const time = options.realTime ? { now: Date.now, advance: () => 0 } : clock()
  if (options.startAt !== undefined) time.advance(options.startAt - T0)
  const outbox = await openTestStore(kind, time.now, options.database)
  opened.push(outbox)
  const worker = testWorker({
    store: outbox,
    destination,
    // Real time: retry 300 ms later, so the test sees the worker's own timer wake it (long enough
    // that a loaded machine still reads the first outcome before the retry).
    retries: retries(options.realTime ? (state) => state.now + 300 : (state) => nextAttemptAt(state, () => 0.5)),
    concurrency: options.concurrency ?? 4,
    leaseTimeout: LEASE_TIMEOUT,
    now: time.now,
  })
  const enqueue = (...ids: string[]) =>
    outbox.enqueue(ids.map((id) => testDelivery(id, { timestamp: new Date(T0).toISOString() })))
  const run = async () => {
    worker.wake()
    await worker.idle()
  }
  return { time, outbox, worker, enqueue, run }
}

describe.each(STORE_KINDS)('on the %s store', (kind) => {
  describe('the worker', () => {
    it('delivers due deliveries and records the attempt with its URL, status and duration', async () => {
      const destination = fakeDestination(ok)
      const { outbox, enqueue, run } = await setup(kind, destination)
      await enqueue('m1', 'm2')
      await run()
      expect(destination.sent.map((m) => m.messageId)).toEqual(['m1', 'm2'])
      const log = await outbox.list({ after: 0, limit: 10 })
      expect(log.map((d) => d.status)).toEqual(['delivered', 'delivered'])
      expect(log[0]!.attempts).toEqual([
        { at: new Date(T0).toISOString(), url: 'https://a.example/hook', status: 200, ms: 12 },
      ])
    })

    it('schedules a retryable failure by the retry rule, and attempts it again once due', async () => {
      const destination = fakeDestination(unavailable, ok)
      const { outbox, enqueue, run, time } = await setup(kind, destination)
      await enqueue('m1')
      await run()
      let [delivery] = await outbox.list({ after: 0, limit: 10 })
      // attempt 1 failed: the wait is 1 s with the jitter pinned to the middle (0.75 s).
      expect(delivery).toMatchObject({
        status: 'pending',
        nextAttemptAt: new Date(T0 + 750).toISOString(),
        lastError: 'https://a.example/hook: HTTP 503',
      })

      time.advance(500)
      await run()
      expect(destination.sent).toHaveLength(1) // not due yet

      time.advance(250)
      await run()
      ;[delivery] = await outbox.list({ after: 0, limit: 10 })
      expect(destination.sent).toHaveLength(2)
      expect(delivery!.status).toBe('delivered')
      expect(delivery!.attempts.map((a) => a.status)).toEqual([503, 200])
    })

    it('dead-letters a delivery with its last error once the 4-hour window is spent', async () => {
      const destination = fakeDestination(unavailable)
      const { outbox, enqueue, run, time } = await setup(kind, destination)
      await enqueue('m1')
      await run()
      for (let i = 0; i < 200 && (await outbox.list({ status: 'pending', after: 0, limit: 1 })).length > 0; i++) {
        time.advance(10 * 60 * 1000)
        await run()
      }
      const [delivery] = await outbox.list({ after: 0, limit: 10 })
      expect(delivery!.status).toBe('failed')
      expect(delivery!.lastError).toBe('retry window spent; last error: https://a.example/hook: HTTP 503')
      // The last attempt falls on the window's end, not after it.
      const last = Date.parse(delivery!.attempts.at(-1)!.at)
      expect(last).toBe(T0 + RETRY_WINDOW_MS)
    })

    it('dead-letters at once on a failure that is not retryable (a 4xx)', async () => {
      const destination = fakeDestination(refused)
      const { outbox, enqueue, run, time } = await setup(kind, destination)
      await enqueue('m1')
      await run()
      time.advance(RETRY_WINDOW_MS)
      await run()
      expect(destination.sent).toHaveLength(1)
      expect((await outbox.list({ after: 0, limit: 10 }))[0]).toMatchObject({
        status: 'failed',
        lastError: 'https://a.example/hook: HTTP 404',
      })
    })

    it('dead-letters a message the destination throws on (it can never be sent)', async () => {
      const { outbox, enqueue, run } = await setup(kind, { send: () => Promise.reject(new Error('cannot format')) })
      await enqueue('m1')
      await run()
      expect((await outbox.list({ after: 0, limit: 10 }))[0]).toMatchObject({
        status: 'failed',
        lastError: 'the destination threw: cannot format',
        // No request was made: the attempts log shows none (no sentinel URL).
        attempts: [],
      })
    })

    it('keeps at most `concurrency` deliveries in flight', async () => {
      let inFlight = 0
      let most = 0
      const destination: Destination = {
        async send() {
          most = Math.max(most, ++inFlight)
          await new Promise((resolve) => setTimeout(resolve, 2))
          inFlight--
          return ok
        },
      }
      const { outbox, enqueue, run } = await setup(kind, destination, { concurrency: 3 })
      await enqueue(...Array.from({ length: 20 }, (_, i) => `m${i}`))
      await run()
      expect(await outbox.list({ status: 'delivered', after: 0, limit: 100 })).toHaveLength(20)
      expect(most).toBe(3)
    })

    it('does not let one slow receiver hold up another source', async () => {
      const time = clock()
      const outbox = await openTestStore(kind, time.now)
      opened.push(outbox)
      let release: () => void = () => {}
      const stuck = new Promise<void>((resolve) => (release = resolve))
      const slow: Destination = {
        send: async () => {
          await stuck
          return ok
        },
      }
      const fast = fakeDestination(ok)
      const worker = testWorker({
        store: outbox,
        destinations: new Map([
          ['slow', new Map([['Webhooks', slow]])],
          ['fast', new Map([['Webhooks', fast as Destination]])],
        ]),
        concurrency: 1,
        now: time.now,
      })
      const delivery = (source: string, id: string) => testDelivery(id, { source })
      await outbox.enqueue([
        delivery('slow', 's1'),
        delivery('slow', 's2'),
        delivery('fast', 'f1'),
        delivery('fast', 'f2'),
      ])
      worker.wake()
      await expect.poll(() => fast.sent.length).toBe(2)
      await expect
        .poll(async () => (await await outbox.list({ status: 'delivered', after: 0, limit: 10 })).length)
        .toBe(2)
      expect((await outbox.list({ status: 'delivered', after: 0, limit: 10 })).map((d) => d.messageId)).toEqual([
        'f1',
        'f2',
      ])
      release()
      await worker.idle()
      expect(await outbox.list({ status: 'delivered', after: 0, limit: 10 })).toHaveLength(4)
    })

    it('attempts again, after a restart, the deliveries that were in flight when the process died', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'tracklet-worker-'))
      try {
        const database = await newDatabase(kind, dir)
        let sending: () => void = () => {}
        const sent = new Promise<void>((resolve) => (sending = resolve))
        const hangAfterSending = () => {
          sending()
          return new Promise<never>(() => {})
        }
        const first = await setup(kind, { send: hangAfterSending }, { database })
        await first.enqueue('m1')
        first.worker.wake()
        await sent
        await first.outbox.close() // the process "dies" with m1 claimed

        // SQLite voids the dead run's leases at the next start; on a shared PostgreSQL another relay
        // takes the work once the lease has run out.
        const destination = fakeDestination(ok)
        const second = await setup(kind, destination, { database, startAt: T0 + LEASE_TIMEOUT })
        await second.run()
        expect(destination.sent.map((m) => m.messageId)).toEqual(['m1'])
        expect((await second.outbox.list({ after: 0, limit: 10 }))[0]!.status).toBe('delivered')
      } finally {
        rmSync(dir, { recursive: true, force: true })
      }
    })

    it('wakes itself when a retry falls due, and starts nothing once stopped', async () => {
      const destination = fakeDestination(unavailable, ok)
      const { outbox, worker, enqueue, run } = await setup(kind, destination, { realTime: true })
      await enqueue('m1')
      await run()
      // The first attempt failed, and nothing retried it yet: the worker went idle with m1 pending.
      expect(destination.sent).toHaveLength(1)
      // No wake() from the test: the lane's timer takes the retry when it is due.
      await expect.poll(async () => (await outbox.list({ status: 'delivered', after: 0, limit: 1 })).length).toBe(1)
      expect(destination.sent).toHaveLength(2)

      await worker.stop(100)
      await enqueue('m2')
      worker.wake()
      await worker.idle()
      expect(destination.sent).toHaveLength(2)
    })
  })

  describe('the worker and the SSRF guard', () => {
    it('dead-letters at once when every URL was refused by the guard, but retries other network errors', async () => {
      const blocked = fakeDestination({
        ok: false,
        retryable: true,
        attempts: [{ url: 'http://10.0.0.1/', error: 'refused', code: 'ERR_BLOCKED_ADDRESS', ms: 1 }],
      })
      const first = await setup(kind, blocked)
      await first.enqueue('m1')
      await first.run()
      expect((await first.outbox.list({ after: 0, limit: 1 }))[0]!.status).toBe('failed')

      const refusedConnection = fakeDestination({
        ok: false,
        retryable: true,
        attempts: [{ url: 'http://hooks.example/', error: 'refused', code: 'ECONNREFUSED', ms: 1 }],
      })
      const second = await setup(kind, refusedConnection)
      await second.enqueue('m1')
      await second.run()
      expect((await second.outbox.list({ after: 0, limit: 1 }))[0]!.status).toBe('pending')
    })
  })

  describe('the worker’s retry timer', () => {
    it('never loses a retry due between two readings of the clock', async () => {
      // A clock that moves on by 1 ms at every reading, as a real one can between two queries.
      let time = T0
      const now = () => time++
      const outbox = await openTestStore(kind, now)
      opened.push(outbox)
      const destination = fakeDestination(unavailable, ok)
      const worker = testWorker({
        store: outbox,
        destination,
        retries: retries((state) => state.now + 5),
        concurrency: 1,
        now,
      })
      await outbox.enqueue([testDelivery('m1')])
      worker.wake()
      await expect.poll(async () => (await outbox.list({ after: 0, limit: 1 }))[0]!.status).toBe('delivered')
      expect(destination.sent).toHaveLength(2)
    })
  })
})
