import { afterEach, describe, expect, it } from 'vitest'
import { createRelay, type Relay } from '../../../src/relay/index'
import { freshPostgresDatabase, sql } from '../../support/postgres'
import { throwawayDatabase } from '../../support/stores'
import { ADMIN_TOKEN, adminGet, post, track, waitFor, WRITE_KEY } from '../helpers'

// A relay on SQLite loading a source into a PostgreSQL warehouse, through the destination module.

let relays: Relay[] = []

afterEach(async () => {
  await Promise.all(relays.map((relay) => relay.close()))
  relays = []
})

async function start(warehouse: string, settings: Record<string, unknown> = {}): Promise<Relay> {
  const relay = await createRelay({
    port: 0,
    database: await throwawayDatabase('sqlite'),
    adminToken: ADMIN_TOKEN,
    logLevel: 'error',
    sources: [
      {
        name: 'web',
        writeKey: WRITE_KEY,
        destinations: { Warehouse: { url: warehouse, loadEvery: 200, maxBatch: 50, ...settings } },
      },
    ],
  })
  relays.push(relay)
  return relay
}

/** The one number `text` counts; 0 while its table does not exist yet. */
async function count(url: string, text: string): Promise<number> {
  try {
    return (await sql<{ n: number }>(url, text))[0]!.n
  } catch (error) {
    if ((error as { code?: string }).code === '42P01') return 0
    throw error
  }
}

describe('a relay loading a warehouse', () => {
  it('loads what a client sends into the source schema, each delivery delivered when its batch commits', async () => {
    const warehouse = await freshPostgresDatabase()
    const relay = await start(warehouse)
    const batch = [
      ...Array.from({ length: 30 }, (_, i) => track({ event: 'Order Completed', properties: { total: i } })),
      { type: 'identify', userId: 'u1', messageId: 'id-1', traits: { plan: 'pro' } },
    ]
    expect((await post(`${relay.url}/v1/batch`, { batch })).status).toBe(200)
    await waitFor(async () => {
      const { body } = await adminGet(`${relay.url}/v1/deliveries?status=delivered`)
      return body.deliveries.length === 31 ? true : undefined
    }, 'every delivery delivered')
    expect(await sql(warehouse, 'SELECT event, count(*)::int AS n FROM web.tracks GROUP BY 1')).toEqual([
      { event: 'order_completed', n: 30 },
    ])
    expect(await count(warehouse, 'SELECT count(*)::int AS n FROM web.order_completed WHERE total IS NOT NULL')).toBe(
      30,
    )
    expect(await sql(warehouse, 'SELECT id, plan FROM web.users')).toEqual([{ id: 'u1', plan: 'pro' }])
    const [row] = await sql<{ received_at: Date }>(warehouse, 'SELECT received_at FROM web.identifies')
    expect(row!.received_at).toBeInstanceOf(Date)
  })

  it('never shows the warehouse password on the admin API', async () => {
    const warehouse = new URL(await freshPostgresDatabase())
    const password = warehouse.password
    const relay = await start(warehouse.toString())
    expect((await post(`${relay.url}/v1/batch`, { batch: [track()] })).status).toBe(200)
    await waitFor(async () => {
      const { body } = await adminGet(`${relay.url}/v1/deliveries?status=delivered`)
      return body.deliveries.length === 1 ? true : undefined
    }, 'the delivery delivered')
    for (const path of ['/v1/sources', '/v1/deliveries', '/v1/endpoints']) {
      const { status, body } = await adminGet(`${relay.url}${path}`)
      if (status === 200) expect(JSON.stringify(body)).not.toContain(password)
    }
  })

  it('lets two relays load one warehouse at once, new columns and all', async () => {
    const warehouse = await freshPostgresDatabase()
    const [a, b] = await Promise.all([start(warehouse), start(warehouse)])
    const send = (relay: Relay, who: string) =>
      post(`${relay.url}/v1/batch`, {
        batch: Array.from({ length: 40 }, (_, i) =>
          track({ event: 'Shared', properties: { [`p${i % 8}`]: i, who }, context: { [`c${i % 4}`]: who } }),
        ),
      })
    const answers = await Promise.all([send(a, 'a'), send(b, 'b')])
    expect(answers.map((answer) => answer.status)).toEqual([200, 200])
    await waitFor(
      async () => ((await count(warehouse, 'SELECT count(*)::int AS n FROM web.shared')) === 80 ? true : undefined),
      'both relays loaded',
    )
    for (const relay of [a, b]) {
      const { body } = await adminGet(`${relay.url}/v1/deliveries?status=failed`)
      expect(body.deliveries).toEqual([])
    }
    expect(
      await count(warehouse, `SELECT count(*)::int AS n FROM web.shared WHERE who = 'b' AND context_c3 = 'b'`),
    ).toBe(10)
  })
})
