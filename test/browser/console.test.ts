import type { BrowserContext, Page } from 'playwright-core'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { createRelay, type Relay } from '../../src/relay/index'
import { freshPostgresDatabase } from '../support/postgres'
import { ADMIN_TOKEN, post, startReceiver, track, WRITE_KEY, waitFor } from '../relay/helpers'
import { startTcpProxy } from '../relay/ops/tcp-proxy'
import { launchChromium, runBrowserTests, SKIP_REASON } from './chromium'

// The operator's console at failure time (issue 20), in a real browser.

let browser: { context: BrowserContext; close: () => Promise<void> } | undefined
const cleanups: (() => Promise<unknown> | unknown)[] = []

describe.skipIf(!runBrowserTests)(
  `the operator's console in headless Chromium${runBrowserTests ? '' : ` (${SKIP_REASON})`}`,
  () => {
    beforeAll(async () => {
      browser = await launchChromium()
    }, 60_000)
    afterAll(async () => {
      await browser?.close()
    })
    afterEach(async () => {
      for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
    })

    async function newPage(): Promise<Page> {
      const page = await browser!.context.newPage()
      cleanups.push(() => page.close())
      return page
    }

    async function signIn(page: Page, relay: Relay): Promise<void> {
      await page.goto(relay.url)
      await page.getByLabel('Admin token').fill(ADMIN_TOKEN)
      await page.getByRole('button', { name: 'Sign in' }).click()
      await page.getByRole('heading', { name: /Recent deliveries/ }).waitFor()
    }

    it('shows the store-down page while PostgreSQL is unreachable, then the overview again', async () => {
      const target = new URL(await freshPostgresDatabase())
      const proxy = await startTcpProxy(Number(target.port))
      cleanups.push(() => proxy.close())
      const database = new URL(target)
      database.port = String(proxy.port)
      const receiver = await startReceiver()
      cleanups.push(() => receiver.close())
      const relay = await createRelay({
        port: 0,
        database: database.toString(),
        adminToken: ADMIN_TOKEN,
        allowPrivateNetworks: true,
        sources: [
          { name: 'web', writeKey: WRITE_KEY, destinations: { Webhooks: { webhooks: [{ url: receiver.url }] } } },
        ],
      })
      cleanups.push(() => relay.close())
      cleanups.push(() => proxy.restore()) // runs first: the relay closes on a reachable database
      expect((await post(`${relay.url}/v1/track`, track())).status).toBe(200)
      const page = await newPage()
      await signIn(page, relay)

      await proxy.cut()
      const response = await page.goto(`${relay.url}/`)
      expect(response?.status()).toBe(503)
      await page.getByRole('heading', { name: 'The store is unavailable' }).waitFor()
      expect(await page.locator('header .health.bad').textContent()).toMatch(/^store unavailable: \S/)
      expect(await page.getByRole('heading', { name: 'What still works' }).isVisible()).toBe(true)
      expect(await page.locator('dt:has-text("Last healthy") + dd time').textContent()).toMatch(/ ago$/)
      // It reloads by itself (no script), and the user can stop that.
      expect(await page.locator('meta[http-equiv="refresh"]').getAttribute('content')).toBe('10')
      await page.getByRole('link', { name: 'Stop reloading' }).click()
      expect(await page.locator('meta[http-equiv="refresh"]').count()).toBe(0)

      await proxy.restore()
      await waitFor(async () => {
        const answer = await page.goto(`${relay.url}/`)
        return answer?.status() === 200 ? true : undefined
      }, 'the overview to come back')
      expect(await page.locator('header .health.ok').textContent()).toBe('store healthy')
    })
  },
)
