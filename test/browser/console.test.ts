import { fileURLToPath } from 'node:url'
import type { BrowserContext, Page } from 'playwright-core'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import type { Relay } from '../../src/relay/index'
import {
  ADMIN_TOKEN,
  adminGet,
  basic,
  post,
  startReceiver,
  startRelay,
  track,
  waitFor,
  waitForDelivery,
} from '../relay/helpers'
import { relayBehindProxy } from '../relay/fixtures/relay'
import { launchChromium, runBrowserTests, SKIP_REASON } from './chromium'

// The operator's console at failure time (issue 20), in a real browser. The views are also
// saved as the screenshots of docs/operations.md.

const docs = (name: string) => fileURLToPath(new URL(`../../docs/${name}`, import.meta.url))
// Written only by the screenshot run (screenshot.config.ts), never by the tests.
const saveShots = process.env['TRACKLET_SCREENSHOTS'] === '1'
const SHOTS = {
  endpoints: docs('operator-page-endpoints.png'),
  delivery: docs('operator-page-delivery.png'),
  replay: docs('operator-page-retry-all.png'),
}

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

    /** A relay with two webhooks: orders (web) and a CRM (ios), with a breaker that opens after 2 failures. */
    async function startConsoleRelay() {
      const orders = await startReceiver()
      const crm = await startReceiver()
      cleanups.push(
        () => orders.close(),
        () => crm.close(),
      )
      const relay = await startRelay(orders.url, {
        breaker: { failureThreshold: 2, probeInterval: 3_600_000, maxProbeInterval: 3_600_000 },
        sources: [
          {
            name: 'web',
            writeKey: 'wk-web',
            destinations: { Webhooks: { webhooks: [{ url: `${orders.url}/orders` }] } },
          },
          {
            name: 'ios',
            writeKey: 'wk-ios',
            destinations: { Webhooks: { webhooks: [{ url: `${crm.url}/crm?token=t0k3n` }] } },
          },
        ],
      })
      cleanups.push(() => relay.close())
      const send = (writeKey: string, batch: Record<string, unknown>[]) =>
        post(`${relay.url}/v1/batch`, { batch }, { authorization: basic(writeKey) })
      return { relay, orders, crm, send }
    }

    it('shows an open and a paused endpoint, first on the overview, and pauses and resumes from the page', async () => {
      const { relay, orders, crm, send } = await startConsoleRelay()
      orders.respond((_req, res) => res.writeHead(503).end('{"error":"db pool exhausted"}'))
      crm.respond((_req, res) => res.writeHead(200).end())
      await send('wk-web', [track(), track(), track()])
      await waitFor(async () => {
        const { body } = await adminGet(`${relay.url}/v1/endpoints`)
        return body.endpoints.some((e: { state: string }) => e.state === 'open') ? true : undefined
      }, 'the orders circuit to open')

      const page = await newPage()
      await signIn(page, relay)
      await page.getByRole('link', { name: 'All endpoints →' }).click()
      const crmRow = page.getByRole('row').filter({ hasText: '/crm' })
      await crmRow.getByRole('button', { name: /^Pause / }).click()
      await page.getByText('Paused: nothing goes there').waitFor()
      expect(await crmRow.locator('.circuit').textContent()).toBe('paused')
      const ordersRow = page.getByRole('row').filter({ hasText: '/orders' })
      expect(await ordersRow.locator('.circuit').textContent()).toBe('open')
      expect(await ordersRow.textContent()).toContain('HTTP 503')
      expect(await ordersRow.textContent()).toContain('{"error":"db pool exhausted"}')
      expect(await page.content()).not.toContain('t0k3n')

      // The overview shows both first, as neither is closed.
      await page.goto(relay.url)
      const troubled = page.locator('table.endpoints').first()
      expect(await troubled.locator('.circuit').allTextContents()).toEqual(['open', 'paused'])
      await send('wk-ios', [track({ messageId: 'held' })])
      await waitFor(async () => {
        const { body } = await adminGet(`${relay.url}/v1/endpoints`)
        return body.endpoints.some((e: { state: string; pending: number }) => e.state === 'paused' && e.pending === 1)
          ? true
          : undefined
      }, 'the held delivery to wait')
      expect(crm.received).toEqual([])
      await troubled
        .getByRole('row')
        .filter({ hasText: '/crm' })
        .getByRole('button', { name: /^Resume / })
        .click()
      await page.getByText('Resumed: its waiting deliveries are attempted now.').waitFor()
      await waitForDelivery(relay.url, 'delivered', 'held')
      if (saveShots) await page.screenshot({ path: SHOTS.endpoints, fullPage: true })
    })

    it('finds a delivery by its messageId from the search box, and shows what the receiver said', async () => {
      const { relay, orders, send } = await startConsoleRelay()
      orders.respond((_req, res) => res.writeHead(422).end('<b>bad</b> {"error":"unknown sku"}'))
      await send('wk-web', [track({ messageId: 'needle-42', event: 'Order Completed' }), track(), track()])
      await waitForDelivery(relay.url, 'failed', 'needle-42')

      const page = await newPage()
      await signIn(page, relay)
      await page.getByLabel('Find a message').fill('needle-42')
      await page.getByRole('button', { name: 'Filter' }).click()
      const rows = page.locator('#deliveries ~ table tbody tr')
      expect(await rows.count()).toBe(1)
      expect(await rows.first().textContent()).toContain('Order Completed')
      await rows.first().getByRole('link').first().click()
      await page.getByRole('heading', { name: /^Delivery \d+/ }).waitFor()
      expect(await page.locator('td strong').first().textContent()).toBe('HTTP 422')
      // Escaped: the receiver's markup shows as text.
      expect(await page.locator('pre.body').first().textContent()).toBe('<b>bad</b> {"error":"unknown sku"}')
      expect(await page.locator('pre.body b').count()).toBe(0)
      await page.getByText('Request headers').click()
      expect(await page.locator('pre.body').nth(1).textContent()).toContain('Content-Type: application/json')
      if (saveShots) await page.screenshot({ path: SHOTS.delivery, fullPage: true })
    })

    it('retries all N dead letters of a filtered list after a confirmation showing N', async () => {
      const { relay, orders, send } = await startConsoleRelay()
      orders.respond((_req, res) => res.writeHead(404).end())
      await send('wk-web', [
        track({ messageId: 'g1', event: 'Gone' }),
        track({ messageId: 'g2', event: 'Gone' }),
        track({ messageId: 'g3', event: 'Gone' }),
        track({ messageId: 'k1', event: 'Kept' }),
      ])
      for (const id of ['g1', 'g2', 'g3', 'k1']) await waitForDelivery(relay.url, 'failed', id)
      orders.respond((_req, res) => res.writeHead(200).end())

      const page = await newPage()
      await signIn(page, relay)
      await page.getByLabel('Status').selectOption('failed')
      await page.getByLabel('Event').fill('Gone')
      await page.getByRole('button', { name: 'Filter' }).click()
      await page.getByRole('link', { name: 'Retry all 3' }).click()
      await page.getByRole('heading', { name: 'Retry 3 dead letters?' }).waitFor()
      if (saveShots) await page.screenshot({ path: SHOTS.replay, fullPage: true })
      await page.getByRole('button', { name: 'Retry 3 now' }).click()
      await page.getByText('Queued again: 3 dead letters').waitFor()
      for (const id of ['g1', 'g2', 'g3']) await waitForDelivery(relay.url, 'delivered', id)
      const { body } = await adminGet(`${relay.url}/v1/deliveries?status=failed`)
      expect(body.deliveries.map((d: { messageId: string }) => d.messageId)).toEqual(['k1'])
    })

    it('shows the store-down page while PostgreSQL is unreachable, then the overview again', async () => {
      const { relay, proxy } = await relayBehindProxy(cleanups)
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
