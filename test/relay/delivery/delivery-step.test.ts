import { afterEach, describe, expect, it } from 'vitest'
import { chainSteps, type DeliveryStep, type StepVerdict } from '../../../src/relay/delivery/delivery-step'
import type { SendsOne as Destination } from '../../../src/relay/destinations/webhooks/sender'
import type { Store } from '../../../src/relay/store/store'
import type { DeliverableMessage } from '../../../src/shared/message'
import { openTestStore, STORE_KINDS } from '../../support/stores'
import { T0, testDelivery } from '../fixtures/deliveries'
import { testWorker } from '../fixtures/worker'

const opened: Store[] = []
afterEach(async () => {
  for (const store of opened.splice(0)) await store.close()
})

// The one step each delivery passes before it is formatted (docs/maintainers.md, "Seams"; the
// destinations' functions are one).
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

  it('sends what the step chooses, filters, retries or dead-letters with no request, and counts a throw as a failure', async () => {
    const seen: string[] = []
    const step: DeliveryStep = {
      of: (source, destination) => async (message) => {
        seen.push(`${source}/${destination}:${message.messageId}`)
        if (message.messageId === 'drop') return { kind: 'filtered', reason: 'not for them' }
        if (message.messageId === 'later') return { kind: 'retry', error: 'not yet' }
        if (message.messageId === 'refuse') return { kind: 'failed', error: 'no such plan' }
        if (message.messageId === 'throw') throw new Error('the step broke')
        return { kind: 'send', message: { ...message, event: 'Renamed' } as DeliverableMessage }
      },
    }
    const { sent, log } = await deliverThrough(step, 'keep', 'drop', 'later', 'refuse', 'throw')
    expect(seen.sort()).toEqual(['drop', 'keep', 'later', 'refuse', 'throw'].map((id) => `web/Webhooks:${id}`))
    expect(sent.map((m) => [m.messageId, (m as { event?: string }).event])).toEqual([['keep', 'Renamed']])
    const byId = new Map(log.map((d) => [d.messageId, d]))
    expect(byId.get('keep')).toMatchObject({ status: 'delivered' })
    expect(byId.get('drop')).toMatchObject({ status: 'filtered', lastError: 'not for them' })
    expect(byId.get('later')).toMatchObject({ status: 'pending', lastError: 'not yet' })
    expect(byId.get('refuse')).toMatchObject({ status: 'failed', lastError: 'no such plan' })
    expect(byId.get('throw')).toMatchObject({ status: 'failed', lastError: 'the delivery step failed: the step broke' })
  })

  it('chains two steps: the second sees what the first chose, and an end in the first stops there', async () => {
    const rename: DeliveryStep = {
      of: () => (message) =>
        message.messageId === 'drop'
          ? { kind: 'filtered', reason: 'first' }
          : { kind: 'send', message: { ...message, event: 'One' } as DeliverableMessage },
    }
    const secondSaw: string[] = []
    const suffix: DeliveryStep = {
      of:
        () =>
        (message): StepVerdict => {
          secondSaw.push(String(message.messageId))
          const event = (message as { event?: string }).event
          return { kind: 'send', message: { ...message, event: `${event}+Two` } as DeliverableMessage }
        },
    }
    const { sent, log } = await deliverThrough(chainSteps(rename, suffix), 'keep', 'drop')
    expect(secondSaw).toEqual(['keep'])
    expect(sent.map((m) => (m as { event?: string }).event)).toEqual(['One+Two'])
    expect(log.find((d) => d.messageId === 'drop')).toMatchObject({ status: 'filtered', lastError: 'first' })
  })
})
