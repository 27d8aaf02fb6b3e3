import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { adminGet, post, type Receiver, startReceiver, startRelay, track, waitFor } from '../helpers'
import { newDatabase, STORE_KINDS } from '../../support/stores'

describe.each(STORE_KINDS)('on the %s store', (kind) => {
  let dir: string
  let receiver: Receiver
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tracklet-lifecycle-'))
    receiver = await startReceiver()
  })
  afterEach(async () => {
    await receiver.close()
    rmSync(dir, { recursive: true, force: true })
  })

  it('close() lets a delivery in flight finish and records it, then closes the database', async () => {
    const database = await newDatabase(kind, dir)
    let answer: (() => void) | undefined
    receiver.respond((_req, res) => (answer = () => res.writeHead(200).end()))
    const relay = await startRelay(receiver.url, { database }, kind)
    await post(`${relay.url}/v1/batch`, { batch: [track({ messageId: 'draining' })] })
    await waitFor(() => answer)
    const closing = relay.close()
    answer!() // the receiver answers while the relay is closing
    await closing
    await relay.close() // idempotent

    const again = await startRelay(receiver.url, { database }, kind)
    try {
      const { body } = await adminGet(`${again.url}/v1/deliveries`)
      expect(body.deliveries.map((d: any) => [d.messageId, d.status])).toEqual([['draining', 'delivered']])
      expect(receiver.received).toHaveLength(1)
    } finally {
      await again.close()
    }
  })

  it('refuses to start on a port in use, and releases everything it opened', async () => {
    const first = await startRelay(receiver.url, {}, kind)
    try {
      const port = Number(new URL(first.url).port)
      await expect(
        startRelay(receiver.url, { port, database: await newDatabase(kind, dir, 'second.db') }, kind),
      ).rejects.toThrow(/EADDRINUSE/)
    } finally {
      await first.close()
    }
  })
})
