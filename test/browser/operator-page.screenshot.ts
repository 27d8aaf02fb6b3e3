import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { fileURLToPath } from 'node:url'
import { request } from 'undici'
import { expect, it } from 'vitest'
import { createRelay } from '../../src/relay/index'
import { ADMIN_TOKEN, basic, waitFor } from '../relay/helpers'
import { launchChromium } from './chromium'

const OUTPUT = fileURLToPath(new URL('../../docs/operator-page.png', import.meta.url))

// Three sources, three receivers with their own habits: the orders service takes everything
// (after a few to 80 ms), the CRM is overloaded for renewals (503 with a long Retry-After, so
// they wait as pending), and a legacy endpoint refuses identify calls for good (dead letters).
it('writes docs/operator-page.png', async () => {
  const receiver = createServer((req, res) => {
    let body = ''
    req.on('data', (chunk: Buffer) => (body += chunk.toString()))
    req.on('end', () => {
      const message = JSON.parse(body) as { type: string; event?: string }
      const answer = () => {
        if (req.url?.startsWith('/crm') && message.event === 'Subscription Renewed')
          res.writeHead(503, { 'retry-after': '3600' }).end()
        else if (req.url?.startsWith('/legacy') && message.type === 'identify') res.writeHead(404).end()
        else res.writeHead(200).end('ok')
      }
      setTimeout(answer, 3 + Math.round(Math.random() * 80))
    })
  })
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve))
  const hooks = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`
  const relay = await createRelay({
    port: 0,
    database: ':memory:',
    adminToken: ADMIN_TOKEN,
    allowPrivateNetworks: true,
    sources: [
      { name: 'web', writeKey: 'wk-web', destinations: { Webhooks: { webhooks: [{ url: `${hooks}/orders` }] } } },
      {
        name: 'ios',
        writeKey: 'wk-ios',
        destinations: { Webhooks: { webhooks: [{ url: `${hooks}/crm/events?token=crm-secret-token` }] } },
      },
      {
        name: 'backend',
        writeKey: 'wk-backend',
        destinations: { Webhooks: { webhooks: [{ url: `${hooks}/legacy/ingest?apiKey=legacy-secret` }] } },
      },
    ],
  })
  const browser = await launchChromium()
  try {
    const events = ['Order Completed', 'Product Viewed', 'Checkout Started', 'Subscription Renewed', 'Signed Up']
    const send = async (writeKey: string, batch: unknown[]) => {
      const response = await request(`${relay.url}/v1/batch`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: basic(writeKey) },
        body: JSON.stringify({ batch }),
      })
      await response.body.dump()
    }
    for (let round = 0; round < 8; round++) {
      const batch = (n: number, offset: number) =>
        Array.from({ length: n }, (_, i) =>
          (round + i) % 4 === 0
            ? { type: 'identify', userId: `user-${100 + round * 7 + i}`, traits: { plan: 'pro' } }
            : {
                type: 'track',
                userId: `user-${100 + round * 7 + i}`,
                event: events[(round + i + offset) % events.length],
              },
        )
      await send('wk-web', batch(4, 0))
      await send('wk-ios', batch(3, 1))
      await send('wk-backend', batch(2, 2))
    }
    // Every delivery attempted at least once.
    await waitFor(async () => {
      const response = await request(`${relay.url}/v1/deliveries?status=pending&limit=500`, {
        headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      })
      const { deliveries } = (await response.body.json()) as { deliveries: { attempts: unknown[] }[] }
      return deliveries.every((d) => d.attempts.length > 0) ? true : undefined
    }, 'every delivery to be attempted')

    const page = await browser.context.newPage()
    await page.setViewportSize({ width: 1280, height: 1060 })
    await page.goto(relay.url)
    await page.getByLabel('Admin token').fill(ADMIN_TOKEN)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.getByRole('heading', { name: 'Recent deliveries' }).waitFor()
    expect(await page.locator('table').nth(1).locator('tbody tr').count()).toBeGreaterThan(10)
    await page.screenshot({ path: OUTPUT })
  } finally {
    await browser.close()
    await relay.close()
    await new Promise((resolve) => receiver.close(resolve))
  }
})
