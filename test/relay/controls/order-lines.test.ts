import { afterEach, expect, it, vi } from 'vitest'
import { ORDER_LINES_EVERY_MS, OrderLines } from '../../../src/relay/delivery/order-lines'

// Each relay moves the held lines of ordered destinations on a timer (docs/delivery-controls.md,
// "What it costs"); the statement itself is tested on both stores in ordering-store.test.ts.

afterEach(() => {
  vi.useRealTimers()
})

it('moves the held lines every ORDER_LINES_EVERY_MS, goes on after a failure, and stops', async () => {
  vi.useFakeTimers()
  let calls = 0
  let failing = true
  const lines = new OrderLines({
    ordering: {
      aheadOf: async () => undefined,
      waiting: async () => [],
      mirrorHeads: async () => {
        calls++
        if (failing) throw new Error('the database is down')
        return 0
      },
    },
  })
  lines.start()
  await vi.advanceTimersByTimeAsync(ORDER_LINES_EVERY_MS - 1)
  expect(calls).toBe(0)
  await vi.advanceTimersByTimeAsync(1)
  expect(calls).toBe(1)
  failing = false
  await vi.advanceTimersByTimeAsync(ORDER_LINES_EVERY_MS)
  expect(calls).toBe(2)
  await lines.stop()
  await vi.advanceTimersByTimeAsync(10 * ORDER_LINES_EVERY_MS)
  expect(calls).toBe(2)
})
