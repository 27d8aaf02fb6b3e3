import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, expect, it } from 'vitest'
import { adminGet, post, type Receiver, startReceiver, startRelay, track, waitFor } from './helpers'

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
  const database = join(dir, 'relay.db')
  let answer: (() => void) | undefined
  receiver.respond((_req, res) => (answer = () => res.writeHead(200).end()))
  const relay = await startRelay(receiver.url, { database })
  await post(`${relay.url}/v1/batch`, { batch: [track({ messageId: 'draining' })] })
  await waitFor(() => answer)
  const closing = relay.close()
  answer!() // the receiver answers while the relay is closing
  await closing
  await relay.close() // idempotent

  const again = await startRelay(receiver.url, { database })
  try {
    const { body } = await adminGet(`${again.url}/v1/deliveries`)
    expect(body.deliveries.map((d: any) => [d.messageId, d.status])).toEqual([['draining', 'delivered']])
    expect(receiver.received).toHaveLength(1)
  } finally {
    await again.close()
  }
})

it('refuses to start on a port in use, and releases everything it opened', async () => {
  const first = await startRelay(receiver.url)
  try {
    const port = Number(new URL(first.url).port)
    await expect(startRelay(receiver.url, { port, database: join(dir, 'second.db') })).rejects.toThrow(/EADDRINUSE/)
  } finally {
    await first.close()
  }
})
