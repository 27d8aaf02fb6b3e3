import { fileURLToPath } from 'node:url'
import { expect, it } from 'vitest'
import { ADMIN_TOKEN, post, track } from '../relay/helpers'
import { relayBehindProxy } from '../relay/fixtures/relay'
import { launchChromium } from './chromium'

const docs = (name: string) => fileURLToPath(new URL(`../../docs/${name}`, import.meta.url))

// The store-down page: a relay on PostgreSQL through a proxy that is then cut.
it('writes docs/operator-page-store-down.png', async () => {
  const cleanups: (() => unknown)[] = []
  const { relay, proxy } = await relayBehindProxy(cleanups)
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
    for (const cleanup of cleanups.reverse()) await cleanup()
  }
})
