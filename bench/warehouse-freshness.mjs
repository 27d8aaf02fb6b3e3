// How fresh the warehouse is: messages arrive at a steady rate, are gathered as a lane gathers
// them (a batch loads when its first message has waited `loadEvery`, or at `maxBatch`), and each
// message's time from arrival to its batch's commit is recorded. Prints p50, p95 and the worst
// beside `loadEvery`; the aim is p95 within `loadEvery` + 10 s.
// Usage: node bench/warehouse-freshness.mjs [--rate 500] [--seconds 30] [--load-every 5000]
//   [--max-batch 10000]
import { parseArgs } from 'node:util'
import { startPostgresServer } from '../test/support/postgres-server.mjs'
import { loadWarehouse } from './warehouse-bundle.mjs'

const { values: args } = parseArgs({
  options: {
    rate: { type: 'string', default: '500' },
    seconds: { type: 'string', default: '30' },
    'load-every': { type: 'string', default: '5000' },
    'max-batch': { type: 'string', default: '10000' },
  },
})
const RATE = Number(args.rate)
const SECONDS = Number(args.seconds)
const LOAD_EVERY = Number(args['load-every'])
const MAX_BATCH = Number(args['max-batch'])

const wh = await loadWarehouse()
const server = await startPostgresServer({ durable: true })
try {
  const url = await server.createDatabase()
  const settings = wh.parseWarehouseSettings({ url, loadEvery: LOAD_EVERY, maxBatch: MAX_BATCH }, 'Warehouse')
  const sender = wh.createWarehouseSender(settings, { source: 'web' })
  const waits = []
  const loads = []
  let gathered = []
  let timer
  let sent = 0
  const load = () => {
    clearTimeout(timer)
    timer = undefined
    const batch = gathered
    gathered = []
    const started = performance.now()
    loads.push(
      sender.sendBatch(batch.map((entry) => entry.item)).then((outcomes) => {
        const committed = performance.now()
        for (const [index, outcome] of outcomes.entries()) {
          if (outcome.kind !== 'delivered') throw new Error(`a load failed: ${outcome.error}`)
          waits.push(committed - batch[index].arrived)
        }
        return committed - started
      }),
    )
  }
  const arrive = () => {
    const i = sent++
    const receivedAt = new Date().toISOString()
    gathered.push({
      arrived: performance.now(),
      item: {
        deliveryId: i,
        source: 'web',
        message: {
          receivedAt,
          type: 'track',
          messageId: `f-${i}`,
          timestamp: receivedAt,
          userId: `u-${i % 500}`,
          event: i % 2 ? 'Product Viewed' : 'Order Completed',
          properties: { price: (i % 100) + 0.99, sku: `sku-${i % 40}`, quantity: i % 5 },
          context: { page: { url: `https://shop.example/${i % 40}` }, ip: '203.0.113.9' },
        },
      },
    })
    if (gathered.length >= MAX_BATCH) load()
    else timer ??= setTimeout(load, LOAD_EVERY)
  }
  // Arrivals in 10 ms ticks, so a slow tick catches up rather than lowering the rate.
  const start = performance.now()
  await new Promise((resolve) => {
    const tick = setInterval(() => {
      const due = Math.min(RATE * SECONDS, Math.floor(((performance.now() - start) / 1000) * RATE))
      while (sent < due) arrive()
      if (sent >= RATE * SECONDS) {
        clearInterval(tick)
        resolve()
      }
    }, 10)
  })
  if (gathered.length > 0) load()
  const loadMs = await Promise.all(loads)
  await sender.close()
  waits.sort((a, b) => a - b)
  loadMs.sort((a, b) => a - b)
  const at = (list, q) => list[Math.min(list.length - 1, Math.floor(q * list.length))]
  const s = (ms) => `${(ms / 1000).toFixed(2)} s`
  console.log(`${sent} messages at ${RATE}/s for ${SECONDS} s; loadEvery ${LOAD_EVERY} ms, maxBatch ${MAX_BATCH}`)
  console.log(`arrival → committed: p50 ${s(at(waits, 0.5))}, p95 ${s(at(waits, 0.95))}, worst ${s(waits.at(-1))}`)
  console.log(`p95 − loadEvery: ${s(at(waits, 0.95) - LOAD_EVERY)} (aim: under 10 s)`)
  console.log(`loads: ${loadMs.length}, each p50 ${s(at(loadMs, 0.5))}, p95 ${s(at(loadMs, 0.95))}`)
} finally {
  await server.stop()
}
