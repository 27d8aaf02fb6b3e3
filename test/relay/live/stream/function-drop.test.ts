import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { Relay } from '../../../../src/relay/index'
import { post, startReceiver, startRelay, track } from '../../helpers'
import { useScaffold } from '../../../support/scaffold'
import { openStream, type StreamReader } from './stream-client'

// A delivery its destination's function drops ends `filtered`: the stream says so twice, as an
// attempt whose outcome is `filtered` and as a `filtered` event naming the delivery.

const scaffold = useScaffold(startReceiver)
let relay: Relay
let reader: StreamReader | undefined

beforeEach(async () => {
  relay = scaffold.keep(
    await startRelay(scaffold.receiver.url, {
      sources: [
        {
          name: 'web',
          writeKey: 'wk-web',
          destinations: {
            Webhooks: {
              webhooks: [{ url: scaffold.receiver.url }],
              function: { code: "function onTrack(event) { return event.event === 'Noise' ? null : event }" },
            },
          },
        },
      ],
    }),
  )
})
afterEach(() => {
  reader?.close()
})

describe('the live stream of a delivery its function drops', () => {
  it('shows the attempt as filtered, and a filtered event with the delivery’s id', async () => {
    reader = await openStream(relay.url, 'kinds=filtered,attempt')
    const auth = { authorization: `Basic ${Buffer.from('wk-web:').toString('base64')}` }
    await post(`${relay.url}/v1/track`, track({ messageId: 'noise-1', event: 'Noise' }), auth)
    const attempt = await reader.next((e) => e.kind === 'attempt', 'the attempt')
    expect(attempt.data).toMatchObject({ source: 'web', messageId: 'noise-1', outcome: 'filtered', url: '' })
    // The attempt says why it ended there, as the delivery's log does.
    expect(attempt.data.error).toBe('dropped by function')
    const filtered = await reader.next((e) => e.kind === 'filtered', 'the filtered event')
    expect(filtered.data).toEqual({
      at: expect.any(String),
      source: 'web',
      messageId: 'noise-1',
      reason: expect.stringContaining('function'),
      deliveryId: attempt.data.deliveryId,
    })
    expect(scaffold.receiver.received).toHaveLength(0)
  })
})
