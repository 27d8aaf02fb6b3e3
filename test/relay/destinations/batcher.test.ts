import { afterEach, describe, expect, it, vi } from 'vitest'
import { Batcher } from '../../../src/relay/delivery/batcher'
import type { DestinationSender, OutboundMessage } from '../../../src/relay/destinations/destination'
import { retries } from '../fixtures/worker'

const message = (id: number): OutboundMessage => ({
  deliveryId: id,
  source: 'web',
  message: { type: 'track', event: 'E', userId: 'u', messageId: `m${id}`, timestamp: '2026-01-01T00:00:00.000Z' },
})

function recording(maxMessages: number, maxWaitMs: number) {
  const batches: number[][] = []
  const sender: DestinationSender = {
    targets: ['memory://t'],
    batching: { maxMessages, maxWaitMs },
    retries: retries(),
    sendBatch: async (batch) => {
      batches.push(batch.map((m) => m.deliveryId))
      return batch.map((m) =>
        m.deliveryId % 2 === 0 ? { kind: 'delivered' } : { kind: 'failed', retryable: true, error: 'odd' },
      )
    },
    close: async () => {},
  }
  return { sender, batches }
}

describe('a batch being gathered', () => {
  afterEach(() => {
    vi.useRealTimers()
  })

  it('goes once full, each message settled by its own outcome', async () => {
    const { sender, batches } = recording(2, 60_000)
    let gone = 0
    const batcher = new Batcher(sender, undefined, () => gone++)
    const first = batcher.add(message(1))
    expect(batcher.open).toBe(true)
    const second = batcher.add(message(2))
    expect(await Promise.all([first, second])).toEqual([
      { kind: 'failed', retryable: true, error: 'odd' },
      { kind: 'delivered' },
    ])
    expect(batches).toEqual([[1, 2]])
    expect(gone).toBe(1)
    expect(batcher.open).toBe(false)
  })

  it('goes after maxWaitMs when not full, and not before', async () => {
    vi.useFakeTimers()
    const { sender, batches } = recording(10, 500)
    const batcher = new Batcher(sender, ['memory://t'], () => {})
    const settled = batcher.add(message(2))
    await vi.advanceTimersByTimeAsync(499)
    expect(batches).toEqual([])
    await vi.advanceTimersByTimeAsync(1)
    expect(batches).toEqual([[2]])
    expect(await settled).toEqual({ kind: 'delivered' })
  })

  it('makes each message a retryable failure when the sender breaks its word and rejects, or answers short', async () => {
    const { sender } = recording(2, 0)
    const rejecting = new Batcher(
      { ...sender, sendBatch: () => Promise.reject(new Error('boom')) },
      undefined,
      () => {},
    )
    expect(await rejecting.add(message(1))).toEqual({
      kind: 'failed',
      retryable: true,
      error: 'the destination failed on the batch: boom',
    })
    const short = new Batcher({ ...sender, sendBatch: async () => [] }, undefined, () => {})
    expect(await short.add(message(1))).toMatchObject({ kind: 'failed', retryable: true })
  })
})
