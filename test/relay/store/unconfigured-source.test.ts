import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import type { Relay } from '../../../src/relay/index'
import { admin, adminGet, post, type Receiver, startReceiver, startRelay } from '../helpers'
import { newDatabase, openTestStore, STORE_KINDS } from '../../support/stores'

let dir: string | undefined
let relay: Relay | undefined
let receiver: Receiver | undefined

afterEach(async () => {
  await relay?.close()
  await receiver?.close()
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true })
  relay = receiver = dir = undefined
})

const delivery = (source: string, messageId: string) => ({
  source,
  destination: 'Webhooks',
  messageId,
  type: 'track',
  json: JSON.stringify({ type: 'track', userId: 'u', event: 'E', messageId, timestamp: '2026-01-01T00:00:00.000Z' }),
})

describe.each(STORE_KINDS)('on the %s store', (kind) => {
  describe('pending deliveries of a source no longer in the configuration', () => {
    it('are dead-lettered at start-up, naming the source, and can be retried by hand', async () => {
      dir = mkdtempSync(join(tmpdir(), 'tracklet-unconfigured-'))
      const database = await newDatabase(kind, dir)
      // The relay last ran with a source "old-web", since renamed to "web"; "old-web" left one pending.
      const store = await openTestStore(kind, Date.now, database)
      await store.enqueue([delivery('old-web', 'm-old'), delivery('web', 'm-web')])
      await store.close()

      receiver = await startReceiver()
      relay = await startRelay(receiver.url, { database }, kind)
      const { body } = await adminGet(`${relay.url}/v1/deliveries`)
      const [current, old] = body.deliveries // newest first
      expect(old).toMatchObject({
        messageId: 'm-old',
        status: 'failed',
        lastError: 'source "old-web" is no longer configured',
      })
      expect(current).toMatchObject({ messageId: 'm-web' })
      expect(current.status).not.toBe('failed')
      // The configured source's delivery still flows.
      while (!receiver.received.some((r) => r.body['messageId'] === 'm-web'))
        await new Promise((resolve) => setTimeout(resolve, 10))

      const retry = await post(`${relay.url}/v1/deliveries/${old.id}/retry`, {}, admin)
      expect(retry.status).toBe(202)
    })
  })
})
