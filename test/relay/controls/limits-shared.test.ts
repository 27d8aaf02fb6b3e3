import type { ServerResponse } from 'node:http'
import { afterEach, describe, expect, it } from 'vitest'
import { createRelay, type Relay } from '../../../src/relay/index'
import { RelayConfigError } from '../../../src/relay/errors'
import { freshPostgresDatabase } from '../../support/postgres'
import { STORE_KINDS, type StoreKind } from '../../support/stores'
import { admin, ADMIN_TOKEN, adminGet, post, startRelay, track, waitFor, WRITE_KEY } from '../helpers'
import { type CountingReceiver, countingReceiver, leastSpanMs } from './receiver'

// The per-URL limits held across relays on one PostgreSQL, shared by a replay's copies, and
// their settings refused with every problem named (docs/delivery-controls.md).

const closing: (() => Promise<void>)[] = []
afterEach(async () => {
  for (const close of closing.splice(0).reverse()) await close()
})

const webhooks = (receiver: CountingReceiver, limits: Record<string, number>) => ({
  Webhooks: { webhooks: [{ url: receiver.url, ...limits }] },
})

async function relayOn(database: string, receiver: CountingReceiver, limits: Record<string, number>): Promise<Relay> {
  const relay = await createRelay({
    port: 0,
    database,
    adminToken: ADMIN_TOKEN,
    allowPrivateNetworks: true,
    concurrency: 16,
    sources: [{ name: 'web', writeKey: WRITE_KEY, destinations: webhooks(receiver, limits) }],
  })
  closing.push(() => relay.close())
  return relay
}

const batch = (count: number, prefix: string) => ({
  batch: Array.from({ length: count }, (_, i) => track({ messageId: `${prefix}${i}` })),
})

const deliveredCount = async (relay: Relay) =>
  ((await adminGet(`${relay.url}/v1/deliveries?status=delivered&limit=500`)).body.deliveries as any[]).length

describe('per-URL limits across two relays on one PostgreSQL', () => {
  it('holds maxInFlight for both relays together', async () => {
    const receiver = await countingReceiver()
    closing.push(() => receiver.close())
    const held: ServerResponse[] = []
    receiver.respond((_req, res) => void held.push(res))
    const database = await freshPostgresDatabase()
    const one = await relayOn(database, receiver, { maxInFlight: 3 })
    const two = await relayOn(database, receiver, { maxInFlight: 3 })
    await post(`${one.url}/v1/batch`, batch(10, 'a'))
    await post(`${two.url}/v1/batch`, batch(10, 'b'))
    await waitFor(() => (receiver.inFlight === 3 ? true : undefined), 'three requests in flight')
    // Each relay would send 16 at once: together they hold 3 while both have work waiting.
    const answer = setInterval(() => {
      for (const res of held.splice(0)) res.writeHead(200).end()
    }, 30)
    closing.push(async () => clearInterval(answer))
    await waitFor(async () => ((await deliveredCount(one)) === 20 ? true : undefined), 'all delivered', 30_000)
    expect(receiver.mostInFlight).toBe(3)
    expect(new Set(receiver.ids).size).toBe(20)
    expect(receiver.ids.some((id) => id.startsWith('a')) && receiver.ids.some((id) => id.startsWith('b'))).toBe(true)
  })

  it('holds ratePerSecond for both relays together', async () => {
    const receiver = await countingReceiver()
    closing.push(() => receiver.close())
    const database = await freshPostgresDatabase()
    const rate = 15
    const one = await relayOn(database, receiver, { ratePerSecond: rate })
    const two = await relayOn(database, receiver, { ratePerSecond: rate })
    await post(`${one.url}/v1/batch`, batch(20, 'a'))
    await post(`${two.url}/v1/batch`, batch(20, 'b'))
    await waitFor(async () => ((await deliveredCount(one)) === 40 ? true : undefined), 'all delivered', 30_000)
    // Never faster than one rate for both (a lower bound only: a slow machine is slower still).
    expect(receiver.times.at(-1)! - receiver.times[0]!).toBeGreaterThanOrEqual(leastSpanMs(40, rate) * 0.9)
  })
})

describe.each(STORE_KINDS)('a replay under the URL’s limit (%s)', (kind: StoreKind) => {
  it('sends its copies within the same maxInFlight as live deliveries', async () => {
    const receiver = await countingReceiver()
    closing.push(() => receiver.close())
    const relay = await startRelay(
      receiver.url,
      {
        concurrency: 16,
        sources: [{ name: 'web', writeKey: WRITE_KEY, destinations: webhooks(receiver, { maxInFlight: 2 }) }],
      },
      kind,
    )
    closing.push(() => relay.close())
    await post(`${relay.url}/v1/batch`, batch(10, 'm'))
    await waitFor(async () => ((await deliveredCount(relay)) === 10 ? true : undefined), 'the originals')
    const held: ServerResponse[] = []
    receiver.respond((_req, res) => void held.push(res))
    const since = new Date(Date.now() - 60_000).toISOString()
    const until = new Date(Date.now() + 60_000).toISOString()
    const started = await post(
      `${relay.url}/v1/replays`,
      { filter: { source: 'web', since, until }, ratePerSecond: 1000 },
      admin,
    )
    expect(started.status).toBe(202)
    // Live deliveries go beside the copies: both count against the same 2.
    await post(`${relay.url}/v1/batch`, batch(5, 'live'))
    await waitFor(() => (receiver.inFlight === 2 ? true : undefined), 'two requests in flight')
    const answer = setInterval(() => {
      for (const res of held.splice(0)) res.writeHead(200).end()
    }, 20)
    closing.push(async () => clearInterval(answer))
    await waitFor(() => (receiver.ids.length === 25 ? true : undefined), 'originals, copies and live', 30_000)
    expect(receiver.mostInFlight).toBe(2)
  })
})

describe('the limits’ settings', () => {
  it('are refused with every problem named by its path', async () => {
    const attempt = startRelay('http://127.0.0.1:9/hook', {
      sources: [
        {
          name: 'web',
          writeKey: WRITE_KEY,
          destinations: {
            Webhooks: {
              webhooks: [
                { url: 'http://127.0.0.1:9/a', ratePerSecond: 0, maxInFlight: 2.5 },
                { url: 'http://127.0.0.1:9/b', ratePerSecond: 'fast' as unknown as number },
              ],
            },
          },
        },
      ],
    })
    const error = await attempt.then(
      () => undefined,
      (thrown: unknown) => thrown,
    )
    expect(error).toBeInstanceOf(RelayConfigError)
    expect((error as RelayConfigError).problems.map((p) => p.field)).toEqual([
      'sources[0].destinations.Webhooks.webhooks[0].ratePerSecond',
      'sources[0].destinations.Webhooks.webhooks[0].maxInFlight',
      'sources[0].destinations.Webhooks.webhooks[1].ratePerSecond',
    ])
    expect((error as Error).message).toContain(
      'must be a number of requests per second above 0, at most 10000, got number 0',
    )
    expect((error as Error).message).toContain('must be an integer from 1 to 1000, got number 2.5')
  })
})
