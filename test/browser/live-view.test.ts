import type { BrowserContext, Page } from 'playwright-core'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import type { Relay } from '../../src/relay/index'
import { ADMIN_TOKEN, basic, post, type Receiver, startReceiver, startRelay, track } from '../relay/helpers'
import { launchChromium, runBrowserTests, SKIP_REASON } from './chromium'

// The operator page's live view (/ui/live) in a real browser: its one script reads the stream with
// the page's session, under the page's Content-Security-Policy.

if (!runBrowserTests) console.warn(`Browser tests of the live view ${SKIP_REASON}`)

let browser: { context: BrowserContext; close: () => Promise<void> } | undefined
let receiver: Receiver
let relay: Relay
let page: Page
let refusedByPolicy: string[]

describe.skipIf(!runBrowserTests)(
  `the live view in headless Chromium${runBrowserTests ? '' : ` (${SKIP_REASON})`}`,
  () => {
    beforeAll(async () => {
      browser = await launchChromium()
    }, 60_000)
    afterAll(async () => {
      await browser?.close()
    })
    beforeEach(async () => {
      receiver = await startReceiver()
      // Event "Gone" is refused for good (dead-lettered); the rest are taken.
      receiver.respond((_req, res) => {
        if (receiver.received.at(-1)?.body['event'] === 'Gone') res.writeHead(404).end('no such hook')
        else res.writeHead(200).end('ok')
      })
      relay = await startRelay(receiver.url, {
        sources: [
          { name: 'web', writeKey: 'wk-web', destinations: { Webhooks: { webhooks: [{ url: receiver.url }] } } },
          { name: 'app', writeKey: 'wk-app', destinations: { Webhooks: { webhooks: [{ url: receiver.url }] } } },
        ],
      })
      page = await browser!.context.newPage()
      refusedByPolicy = []
      page.on('console', (message) => {
        if (/Content Security Policy/i.test(message.text())) refusedByPolicy.push(message.text())
      })
    })
    afterEach(async () => {
      await page.close()
      await relay.close()
      await receiver.close()
    })

    async function openLiveView(): Promise<void> {
      await page.goto(`${relay.url}/ui/live`)
      await page.getByLabel('Admin token').fill(ADMIN_TOKEN)
      await page.getByRole('button', { name: 'Sign in' }).click()
      await page.getByRole('heading', { name: /Live view/ }).waitFor()
      await page.getByRole('status').filter({ hasText: 'Live' }).waitFor()
    }

    const rows = () => page.locator('#live-rows tr:not([hidden])')

    it('shows events as they come, filters them, pauses, and links an attempt to its request and answer', async () => {
      await openLiveView()
      await post(`${relay.url}/v1/track`, track({ userId: 'ada', event: 'Signed Up', messageId: 'm-ada' }), {
        authorization: basic('wk-web'),
      })
      await post(`${relay.url}/v1/track`, track({ userId: 'bob', event: 'Gone', messageId: 'm-bob' }), {
        authorization: basic('wk-app'),
      })
      await rows().filter({ hasText: 'm-bob' }).filter({ hasText: 'failed' }).waitFor()
      await rows().filter({ hasText: 'm-ada' }).filter({ hasText: 'delivered' }).waitFor()

      // By userId: the message's attempts go with it (their events carry no userId of their own).
      await page.getByLabel('userId').fill('bob')
      expect(await rows().allTextContents()).toEqual([
        expect.stringMatching(/attempt.*m-bob.*failed · HTTP 404/),
        expect.stringMatching(/ingested.*app.*track · Gone.*bob.*m-bob/),
      ])
      await page.getByLabel('userId').fill('')
      await page.getByLabel('Source').selectOption('web')
      expect((await rows().allTextContents()).every((text) => text.includes('m-ada'))).toBe(true)
      await page.getByLabel('Source').selectOption('')
      await page.getByLabel('Event').fill('Signed Up')
      expect(await rows().count()).toBe(2)
      await page.getByLabel('Event').fill('')
      await page.getByLabel('Type').fill('identify')
      expect(await rows().count()).toBe(0)
      await page.getByLabel('Type').fill('')

      // Paused, new events are held back, and shown on resuming.
      await page.getByRole('button', { name: 'Pause' }).click()
      await post(`${relay.url}/v1/track`, track({ messageId: 'm-held' }), { authorization: basic('wk-web') })
      await page
        .getByRole('status')
        .filter({ hasText: /Paused: [12] new events held back/ })
        .waitFor()
      expect(await rows().filter({ hasText: 'm-held' }).count()).toBe(0)
      await page.getByRole('button', { name: 'Resume' }).click()
      await rows().filter({ hasText: 'm-held' }).first().waitFor()

      // One click from the failed attempt to the delivery's page, with the receiver's answer.
      await rows().filter({ hasText: 'm-bob' }).getByRole('link', { name: 'Request and answer →' }).click()
      await page.getByRole('heading', { name: /Delivery \d+/ }).waitFor()
      expect(await page.locator('table.attempts').textContent()).toContain('HTTP 404')
      expect(refusedByPolicy).toEqual([])
    })
  },
)
