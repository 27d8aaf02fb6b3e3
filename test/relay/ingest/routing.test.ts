import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { Relay } from '../../../src/relay/index'
import { adminGet, basic, post, type Receiver, startReceiver, startRelay, track, waitFor } from '../helpers'
import { STORE_KINDS } from '../../support/stores'

describe.each(STORE_KINDS)('on the %s store', (kind) => {
  let receiver: Receiver
  let relay: Relay

  beforeEach(async () => {
    receiver = await startReceiver()
    relay = await startRelay(
      receiver.url,
      {
        sources: [
          { name: 'web', writeKey: 'wk-web', destinations: { Webhooks: { webhooks: [{ url: receiver.url }] } } },
          { name: 'batch-jobs', writeKey: 'wk-jobs' }, // no destination
        ],
      },
      kind,
    )
  })
  afterEach(async () => {
    await receiver.close()
    await relay.close()
  })

  /** Sends one message per case and returns the message ids that reached the webhook. */
  async function routed(cases: Record<string, Record<string, unknown> | undefined>): Promise<string[]> {
    const batch = Object.entries(cases).map(([id, integrations]) =>
      track({ messageId: id, ...(integrations === undefined ? {} : { integrations }) }),
    )
    const answer = await post(`${relay.url}/v1/batch`, { batch }, { authorization: basic('wk-web') })
    expect(answer.body.accepted).toBe(batch.length)
    // Everything routed is in the log at once (committed before the answer); wait for it to settle.
    const { body } = await adminGet(`${relay.url}/v1/deliveries?limit=100`)
    const ids = (body.deliveries as any[]).map((d) => d.messageId as string)
    await waitFor(() => (receiver.received.length === ids.length ? true : undefined))
    return ids.sort()
  }

  describe('routing by integrations', () => {
    it('sends to every destination by default', async () => {
      expect(await routed({ none: undefined, empty: {} })).toEqual(['empty', 'none'])
    })

    it('skips a destination named false', async () => {
      expect(await routed({ off: { Webhooks: false }, other: { Mixpanel: false } })).toEqual(['other'])
    })

    it('with All: false, sends only to destinations named true (or given options)', async () => {
      expect(
        await routed({
          allOff: { All: false },
          named: { All: false, Webhooks: true },
          options: { All: false, Webhooks: { mode: 'x' } },
        }),
      ).toEqual(['named', 'options'])
    })

    it('a destination named false wins over All: true', async () => {
      expect(await routed({ a: { All: true, Webhooks: false } })).toEqual([])
    })

    it('keys are case sensitive: webhooks is not Webhooks', async () => {
      expect(await routed({ lower: { webhooks: false }, lowerOn: { All: false, webhooks: true } })).toEqual(['lower'])
    })

    it('accepts messages of a source without destinations and delivers nothing', async () => {
      const answer = await post(`${relay.url}/v1/batch`, { batch: [track()] }, { authorization: basic('wk-jobs') })
      expect(answer.body).toEqual({ success: true, accepted: 1, refused: [] })
      expect((await adminGet(`${relay.url}/v1/deliveries`)).body.deliveries).toEqual([])
    })
  })
})
