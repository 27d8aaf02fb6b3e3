import { describe, expect, it } from 'vitest'
import { STORE_KINDS } from '../../support/stores'
import { useRelayWithReceiver } from '../fixtures/relay'
import { adminGet, post, track } from '../helpers'

const EMPTY_REFUSAL = 'type must be one of identify, track, page, screen, group, alias, got undefined'

describe.each(STORE_KINDS)('on the %s store', (kind) => {
  const running = useRelayWithReceiver(kind)

  it('lists the first 100 refusals and counts them all, so a batch of junk gets a small answer', async () => {
    const batch = [...Array.from({ length: 250 }, () => ({})), track({ messageId: 'kept' })]
    const answer = await post(`${running.relay.url}/v1/batch`, { batch })
    expect(answer.status).toBe(200)
    expect(answer.body).toEqual({
      success: true,
      accepted: 1,
      refused: Array.from({ length: 100 }, (_, index) => ({ index, reason: EMPTY_REFUSAL })),
      refusedCount: 250,
    })
  })

  it('lists 100 refusals without a count: nothing was left out', async () => {
    const answer = await post(`${running.relay.url}/v1/batch`, { batch: Array.from({ length: 100 }, () => ({})) })
    expect(answer.status).toBe(400)
    expect(answer.body).toEqual({
      success: false,
      accepted: 0,
      refused: Array.from({ length: 100 }, (_, index) => ({ index, reason: EMPTY_REFUSAL })),
    })
  })

  it('reports a messageId repeated within a batch as a duplicate, and stores the first', async () => {
    const batch = [
      track({ messageId: 'a', event: 'First' }),
      track({ messageId: 'a', event: 'Second' }),
      track({ messageId: 'b' }),
    ]
    const answer = await post(`${running.relay.url}/v1/batch`, { batch })
    expect(answer).toEqual({
      status: 200,
      body: {
        success: true,
        accepted: 2,
        refused: [{ index: 1, reason: 'messageId "a" is the messageId of message 0 of this batch' }],
      },
    })
    const stored = (await adminGet(`${running.relay.url}/v1/deliveries`)).body.deliveries
    // The log is newest first.
    expect(stored.map((d: any) => [d.messageId, d.message.event])).toEqual([
      ['b', 'Signed Up'],
      ['a', 'First'],
    ])
  })
})
