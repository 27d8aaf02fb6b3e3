import { fileURLToPath } from 'node:url'
import { expect, it } from 'vitest'
import { createRelay } from '../../src/relay/index'
import { freshPostgresDatabase } from '../support/postgres'
import { ADMIN_TOKEN, post, startReceiver, track, WRITE_KEY } from '../relay/helpers'
import { startTcpProxy } from '../support/tcp-proxy'
import { launchChromium } from './chromium'

const docs = (name: string) => fileURLToPath(new URL(`../../docs/${name}`, import.meta.url))

// The store-down page: a relay on PostgreSQL through a proxy that is then cut.
it('writes docs/operator-page-store-down.png', async () => {
  const target = new URL(await freshPostgresDatabase())
  const proxy = await startTcpProxy(Number(target.port))
  const database = new URL(target)
  database.port = String(proxy.port)
  const receiver = await startReceiver()
  const relay = await createRelay({
    port: 0,
    database: database.toString(),
    adminToken: ADMIN_TOKEN,
    allowPrivateNetworks: true,
    sources: [{ name: 'web', writeKey: WRITE_KEY, destinations: { Webhooks: { webhooks: [{ url: receiver.url }] } } }],
  })
  const browser = await launchChromium()
  try {
    expect((await post(`${relay.url}/v1/track`, track())).status).toBe(200)
    const page = await browser.context.newPage()
    await page.setViewportSize({ width: 1280, height: 720 })
    await page.goto(relay.url)
    await page.getByLabel('Admin token').fill(ADMIN_TOKEN)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.getByRole('heading', { name: /Recent deliveries/ }).waitFor()
    await proxy.cut()
    await page.goto(`${relay.url}/?refresh=off`)
    await page.getByRole('heading', { name: 'The store is unavailable' }).waitFor()
    await page.screenshot({ path: docs('operator-page-store-down.png') })
  } finally {
    await browser.close()
    await proxy.restore()
    await relay.close()
    await proxy.close()
    await receiver.close()
  }
})
