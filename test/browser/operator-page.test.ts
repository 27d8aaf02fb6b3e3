import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { BrowserContext, Page } from 'playwright-core'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import type { Relay } from '../../src/relay/index'
import {
  ADMIN_TOKEN,
  post,
  type Receiver,
  startReceiver,
  startRelay,
  track,
  waitFor,
  waitForDelivery,
} from '../relay/helpers'
import { launchChromium, runBrowserTests, SKIP_REASON } from './chromium'

const READ_TOKEN = 'read-token-for-browser-0123'

// Said once, where a person running the suite will see it.
if (!runBrowserTests) console.warn(`Browser tests of the operator page ${SKIP_REASON}`)

let browser: { context: BrowserContext; close: () => Promise<void> } | undefined
let receiver: Receiver
let relay: Relay
let page: Page

describe.skipIf(!runBrowserTests)(
  `the operator page in headless Chromium${runBrowserTests ? '' : ` (${SKIP_REASON})`}`,
  () => {
    beforeAll(async () => {
      browser = await launchChromium()
    }, 60_000)
    afterAll(async () => {
      await browser?.close()
    })
    beforeEach(async () => {
      receiver = await startReceiver()
      relay = await startRelay(receiver.url, { readToken: READ_TOKEN })
      page = await browser!.context.newPage()
    })
    afterEach(async () => {
      await page.close()
      await relay.close()
      await receiver.close()
    })

    async function signIn(token = ADMIN_TOKEN): Promise<void> {
      await page.goto(relay.url)
      await page.getByLabel('Admin token or read token').fill(token)
      await page.getByRole('button', { name: 'Sign in' }).click()
      await page.getByRole('heading', { name: 'Recent deliveries' }).waitFor()
    }

    it('signs in, finds a dead-lettered delivery, retries it and sees it delivered', async () => {
      // The receiver refuses the first request for good (404: dead-lettered), then takes them.
      receiver.respond((_req, res) => res.writeHead(404).end())
      const message = track({ event: 'Order Completed' })
      expect((await post(`${relay.url}/v1/track`, message)).status).toBe(200)
      const delivery = await waitForDelivery(relay.url, 'failed', message['messageId'] as string)
      receiver.respond((_req, res) => res.writeHead(200).end('ok'))

      await signIn()
      await page.getByLabel('Status').selectOption('failed')
      await page.getByRole('button', { name: 'Filter' }).click()
      // The replay form opens asking for its window, with no error yet.
      await page.getByRole('link', { name: 'Replay these…' }).click()
      await page.getByRole('heading', { name: 'Replay deliveries' }).waitFor()
      expect(await page.getByRole('alert').count()).toBe(0)
      await page.goBack()
      const row = page.getByRole('row').filter({ hasText: 'Order Completed' })
      expect(await row.locator('.status').textContent()).toBe('dead-lettered')

      await row.getByRole('button', { name: `Retry delivery ${delivery.id}` }).click()
      await page.getByText('Queued again').waitFor()
      expect(new URL(page.url()).pathname).toBe(`/ui/deliveries/${delivery.id}`)
      // The page has no script: reload until the worker has delivered it.
      const status = await waitFor(async () => {
        await page.reload()
        const text = await page.locator('h1 .status').textContent()
        return text === 'delivered' ? text : undefined
      }, 'the page to show the delivery delivered')
      expect(status).toBe('delivered')
      expect(receiver.received).toHaveLength(2)
      // Both attempts are listed: the 404 and the 200.
      expect(await page.locator('table.attempts tbody tr').allTextContents()).toEqual([
        expect.stringContaining('HTTP 404'),
        expect.stringContaining('HTTP 200'),
      ])
    })

    it('shows the read token the dead letters and no button that changes anything', async () => {
      receiver.respond((_req, res) => res.writeHead(404).end())
      const message = track({ event: 'Order Completed' })
      expect((await post(`${relay.url}/v1/track`, message)).status).toBe(200)
      const delivery = await waitForDelivery(relay.url, 'failed', message['messageId'] as string)

      await signIn(READ_TOKEN)
      await page.getByText('Signed in with the read token').waitFor()
      await page.getByLabel('Status').selectOption('failed')
      await page.getByRole('button', { name: 'Filter' }).click()
      const row = page.getByRole('row').filter({ hasText: 'Order Completed' })
      expect(await row.locator('.status').textContent()).toBe('dead-lettered')
      expect(await row.getByRole('button', { name: `Retry delivery ${delivery.id}` }).isVisible()).toBe(false)
      expect(await page.getByRole('link', { name: 'Replay these…' }).count()).toBe(0)
      await page.goto(`${relay.url}/ui/deliveries/${delivery.id}`)
      expect(await page.getByRole('button', { name: 'Retry now' }).isVisible()).toBe(false)
      // Signing out stays offered.
      await page.getByRole('button', { name: 'Sign out' }).click()
      await page.getByLabel('Admin token').waitFor()
    })

    it('shows a <script> in a message as text and never runs it', async () => {
      // Anything the injected markup ran would call here.
      const beacon = await startBeacon()
      try {
        const message = track({
          event: `<script>window.injected = true; fetch('${beacon.url}/script')</script>`,
          properties: { note: `"><img src="${beacon.url}/img" onerror="window.injected = true">` },
        })
        receiver.respond((_req, res) => res.writeHead(404).end())
        expect((await post(`${relay.url}/v1/track`, message)).status).toBe(200)
        const delivery = await waitForDelivery(relay.url, 'failed', message['messageId'] as string)
        const requested: string[] = []
        page.on('request', (request) => requested.push(request.url()))

        await signIn()
        await expect(page.getByText(`window.injected = true; fetch('${beacon.url}/script')`).count()).resolves.toBe(1)
        await page.goto(`${relay.url}/ui/deliveries/${delivery.id}`)
        const json = await page.locator('pre.json').textContent()
        expect(JSON.parse(json!)).toMatchObject({ event: message['event'], properties: message['properties'] })

        expect(await page.evaluate('typeof window.injected')).toBe('undefined')
        expect(beacon.hits).toEqual([])
        expect(requested.filter((url) => !url.startsWith(relay.url))).toEqual([])
      } finally {
        await beacon.close()
      }
    })

    it('suppresses two users from the Suppressions link and lifts one', async () => {
      await signIn()
      await page.getByRole('link', { name: 'Suppressions' }).click()
      await page.getByRole('heading', { name: 'Suppressions', exact: true }).waitFor()
      await page.getByLabel(/User ids, one per line/).fill('alice\n<b>bob</b>\n')
      await page.getByRole('button', { name: 'Suppress' }).click()
      await page.getByText('Suppressed: 2 newly').waitFor()
      expect(await page.locator('#suppressions tbody tr').count()).toBe(2)
      expect(await page.locator('#suppressions b').count()).toBe(0)
      await page.getByRole('row').filter({ hasText: 'alice' }).getByRole('button', { name: 'Lift' }).click()
      await page.getByText('Lifted: 1 suppression.').waitFor()
      expect(await page.locator('#suppressions tbody tr').allTextContents()).toEqual([
        expect.stringContaining('<b>bob</b>'),
      ])
    })
  },
)

/** A server that records every request made to it. */
async function startBeacon(): Promise<{ url: string; hits: string[]; close: () => Promise<void> }> {
  const hits: string[] = []
  const server: Server = createServer((req, res) => {
    hits.push(req.url ?? '')
    res.writeHead(204).end()
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    hits,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  }
}
