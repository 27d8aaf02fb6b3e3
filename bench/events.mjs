// The workload shared by every variant of the benchmark, so that all send the same events.
import { randomUUID } from 'node:crypto'

/** The write key every variant sends with (the sink does not check it). */
export const WRITE_KEY = 'bench-write-key'

const PRODUCTS = ['Notebook', 'Fountain Pen', 'Desk Lamp', 'Ink Refill', 'Paper Clips']

/**
 * The `i`-th `track` call, as an application would make it: about 300 bytes of properties
 * (measured once by the runner and printed), built afresh for each call.
 */
export function makeEvent(i) {
  const product = PRODUCTS[i % PRODUCTS.length]
  return {
    userId: `user-${i % 5000}`,
    event: 'Order Completed',
    properties: {
      orderId: `order-${1_000_000 + i}`,
      affiliation: 'web-store',
      total: 27.5 + (i % 100),
      revenue: 25 + (i % 100),
      shipping: 2.5,
      currency: 'EUR',
      coupon: i % 3 === 0 ? 'SPRING' : null,
      products: [
        { sku: `sku-${i % 977}`, name: product, price: 12.5, quantity: 1 + (i % 3), category: 'Stationery' },
        { sku: `sku-${(i + 1) % 977}`, name: 'Gift Wrap', price: 2.5, quantity: 1, category: 'Extras' },
      ],
    },
  }
}

/**
 * What the baseline builds by hand for each call: the wire message the SDK sends for the same
 * event (type, messageId, timestamp, context.library), so both variants send the same shapes.
 */
export function toWireMessage(event, library) {
  // `type` first: V8 builds `{ type, ...event }` on its fast path, `{ ...event, type }` on a slow one.
  return {
    type: 'track',
    ...event,
    messageId: randomUUID(),
    timestamp: new Date().toISOString(),
    context: { library },
  }
}

/** The `i`-th event a function's sandbox is handed in the function benches (a small `track`). */
export const functionEvent = (i) => ({
  type: 'track',
  event: 'Bench',
  userId: `u${i}`,
  messageId: `m-${i}`,
  timestamp: '2026-01-01T00:00:00.000Z',
  properties: { i, plan: 'pro', path: '/checkout' },
})
