import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import type { DeliveryStep } from '../../../src/relay/delivery/delivery-step'
import type { SendsOne as Destination } from '../../../src/relay/destinations/webhooks/sender'
import { openSqliteStore } from '../../../src/relay/store/sqlite/sqlite-store'
import { T0 } from '../delivery/breaker-helpers'
import { delivery } from '../delivery/breaker-helpers'
import { retries, testWorker } from '../fixtures/worker'

// The circuit breaker's probe and a destination's function (docs/functions.md): the delivery
// chosen to probe a half-open URL runs its function first; one the function drops makes no
// request, so the probe goes with the next delivery at once, not a probe interval later.

const URL = 'https://recovering.example/hook'

beforeEach(() => {
  vi.useFakeTimers({ now: T0 })
})
afterEach(() => {
  vi.useRealTimers()
})

describe('a probe whose delivery the function drops', () => {
  it('goes with the next waiting delivery at once, and the circuit closes', async () => {
    // The first request fails (the circuit opens); every one after is answered.
    const sent: { id: string; at: number }[] = []
    const destination: Destination = {
      urls: [URL],
      async send(message) {
        sent.push({ id: String(message.messageId), at: Date.now() })
        const status = sent.length === 1 ? 503 : 200
        return { ok: status === 200, retryable: status !== 200, attempts: [{ url: URL, status, ms: 1 }] }
      },
    }
    const dropped = (id: unknown) => String(id).startsWith('internal-')
    const step: DeliveryStep = {
      of: () => async (message) =>
        dropped(message.messageId) ? { kind: 'filtered', reason: 'dropped by function' } : { kind: 'send', message },
    }
    const store = await openSqliteStore(':memory:', Date.now)
    const worker = testWorker({
      store,
      destinations: new Map([['web', new Map([['Webhooks', destination]])]]),
      // A failed delivery is dead-lettered at once: only the deliveries below wait for the circuit.
      retries: retries(() => undefined),
      now: Date.now,
      breaker: {
        ...{ failureThreshold: 1, probeInterval: 1000, maxProbeInterval: 8000, maxInFlightPerUrl: 1 },
        circuits: store.circuits,
        random: () => 0,
      },
      step,
    })
    try {
      await store.enqueue([delivery('web', 'opens-it')])
      worker.wake()
      await vi.advanceTimersByTimeAsync(100)
      expect(sent.map((s) => s.id)).toEqual(['opens-it'])
      expect(worker.circuits()[0]).toMatchObject({ url: URL, state: 'open' })

      // Waiting behind the open circuit: two the function drops, then one it sends.
      await store.enqueue(['internal-1', 'internal-2', 'order-1'].map((id) => delivery('web', id)))
      worker.wake()
      // Past the first probe (1 s after the failure), well before a second one would be due (2 s later).
      await vi.advanceTimersByTimeAsync(1500)

      expect(sent.map((s) => s.id)).toEqual(['opens-it', 'order-1'])
      expect(worker.circuits()[0]).toMatchObject({ state: 'closed' })
      const log = await store.list({ after: 0, limit: 10 })
      const status = Object.fromEntries(log.map((d) => [d.messageId, d.status]))
      expect(status).toEqual({
        'opens-it': 'failed',
        'internal-1': 'filtered',
        'internal-2': 'filtered',
        'order-1': 'delivered',
      })
    } finally {
      await worker.stop(0)
      await store.close()
    }
  })
})
