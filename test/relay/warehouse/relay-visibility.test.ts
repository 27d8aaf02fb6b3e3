import { afterEach, describe, expect, it } from 'vitest'
import { createRelay, type Relay } from '../../../src/relay/index'
import { PageClient } from '../console/page-client'
import { freshPostgresDatabase } from '../../support/postgres'
import { throwawayDatabase } from '../../support/stores'
import { ADMIN_TOKEN, adminGet, post, track, waitFor, WRITE_KEY } from '../helpers'

// What an operator sees of a warehouse: its conflicts counted, on the delivery, on the endpoints
// view (API and page) beside its state and last load.

let relay: Relay | undefined

afterEach(async () => {
  await relay?.close()
  relay = undefined
})

async function metrics(url: string): Promise<string> {
  const response = await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })
  return response.text()
}

describe('a warehouse as the operator sees it', () => {
  it('counts a value stored as NULL, shows it on its delivery, and lists the warehouse with its last load', async () => {
    const warehouse = await freshPostgresDatabase()
    relay = await createRelay({
      port: 0,
      database: await throwawayDatabase('sqlite'),
      adminToken: ADMIN_TOKEN,
      logLevel: 'error',
      sources: [{ name: 'web', writeKey: WRITE_KEY, destinations: { Warehouse: { url: warehouse, loadEvery: 100 } } }],
    })
    const url = relay.url
    expect(await metrics(url)).toMatch(/^tracklet_warehouse_conflicts_total\{source="web"\} 0$/m)
    // The first value makes `total` a bigint; the second cannot be one.
    expect(
      (await post(`${url}/v1/batch`, { batch: [track({ messageId: 'first', properties: { total: 3 } })] })).status,
    ).toBe(200)
    await waitFor(async () => {
      const { body } = await adminGet(`${url}/v1/deliveries?status=delivered`)
      return body.deliveries.length === 1 ? true : undefined
    }, 'the first load')
    const conflicting = track({ messageId: 'second', properties: { total: 'a lot' } })
    expect((await post(`${url}/v1/batch`, { batch: [conflicting] })).status).toBe(200)
    const delivered = await waitFor(async () => {
      const { body } = await adminGet(`${url}/v1/deliveries?status=delivered`)
      return (body.deliveries as { id: number; messageId: string }[]).find((d) => d.messageId === 'second')
    }, 'the conflicting message loaded')

    expect(await metrics(url)).toMatch(/^tracklet_warehouse_conflicts_total\{source="web"\} 1$/m)
    const { body: delivery } = await adminGet(`${url}/v1/deliveries/${delivered.id}`)
    expect(delivery.attempts).toEqual([
      expect.objectContaining({
        status: 200,
        responseBody: 'stored as NULL (type conflict): signed_up.total = "a lot"',
      }),
    ])

    const { body } = await adminGet(`${url}/v1/endpoints`)
    const target = (body.endpoints as { url: string }[]).find((e) => e.url.startsWith('postgres://'))
    expect(target).toMatchObject({
      state: 'closed',
      sources: ['web'],
      pending: 0,
      destination: { last: { text: 'load of 1 message', at: expect.any(String) }, conflicts: 1 },
    })
    const page = new PageClient(url)
    await page.signIn()
    const html = (await page.get('/ui/endpoints')).body
    expect(html).toContain('last: load of 1 message')
    expect(html).toContain('conflicts (stored as NULL): 1')
  })
})
