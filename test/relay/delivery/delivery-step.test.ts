import { afterEach, describe, expect, it } from 'vitest'
import { DROP_DELIVERY, type DeliveryStep } from '../../../src/relay/delivery/delivery-step'
import type { Destination } from '../../../src/relay/delivery/destination'
import type { Store } from '../../../src/relay/store/store'
import type { DeliverableMessage } from '../../../src/shared/message'
import { openTestStore, STORE_KINDS } from '../../support/stores'
import { T0, testDelivery } from '../fixtures/deliveries'
import { testWorker } from '../fixtures/worker'

const opened: Store[] = []
afterEach(async () => {
  for (const store of opened.splice(0)) await store.close()
})

// The seam functions will plug into (docs/maintainers.md, "Seams"): each due delivery passes
// through the step, when there is one, before its destination formats it.
describe.each(STORE_KINDS)('a delivery step, on the %s store', (kind) => {
  async function deliverThrough(step: DeliveryStep | undefined, ...ids: string[]) {
    const store = await openTestStore(kind, () => T0)
    opened.push(store)
    const sent: DeliverableMessage[] = []
    const destination: Destination = {
      async send(message) {
        sent.push(message)
        return { ok: true, retryable: false, attempts: [{ url: 'https://a.example/hook', status: 200, ms: 3 }] }
      },
    }
    const worker = testWorker({ store, destination, now: () => T0, ...(step === undefined ? {} : { step }) })
    await store.enqueue(ids.map((id) => testDelivery(id)))
    worker.wake()
    await worker.idle()
    const log = await store.list({ after: 0, limit: 10 })
    return { sent, log }
  }

  it('sends the stored message as it is without one', async () => {
    const { sent, log } = await deliverThrough(undefined, 'm1')
    expect(sent.map((m) => [m.messageId, (m as { event?: string }).event])).toEqual([['m1', 'E']])
    expect(log[0]).toMatchObject({ status: 'delivered' })
  })

  it('sends what the step returns, settles a dropped one with no request, and dead-letters an error', async () => {
    const seen: string[] = []
    const step: DeliveryStep = (message, source) => {
      seen.push(`${source}:${message.messageId}`)
      if (message.messageId === 'drop') return DROP_DELIVERY
      if (message.messageId === 'refuse') return new Error('no such plan')
      if (message.messageId === 'throw') throw new Error('the function broke')
      return { ...message, event: 'Renamed' } as DeliverableMessage
    }
    const { sent, log } = await deliverThrough(step, 'keep', 'drop', 'refuse', 'throw')
    expect(seen.sort()).toEqual(['web:drop', 'web:keep', 'web:refuse', 'web:throw'])
    expect(sent.map((m) => [m.messageId, (m as { event?: string }).event])).toEqual([['keep', 'Renamed']])
    const byId = new Map(log.map((d) => [d.messageId, d]))
    expect(byId.get('keep')).toMatchObject({ status: 'delivered' })
    expect(byId.get('drop')).toMatchObject({ status: 'delivered', attempts: [] })
    expect(byId.get('refuse')).toMatchObject({
      status: 'failed',
      lastError: 'the delivery step refused it: no such plan',
    })
    expect(byId.get('throw')).toMatchObject({
      status: 'failed',
      lastError: 'the delivery step refused it: the function broke',
    })
  })
})
