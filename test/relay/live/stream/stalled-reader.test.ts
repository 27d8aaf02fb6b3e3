import { connect, type Socket } from 'node:net'
import { afterEach, beforeEach, expect, it } from 'vitest'
import type { Relay } from '../../../../src/relay/index'
import { sseEvents } from '../../../../src/cli/sse-events'
import { ADMIN_TOKEN, adminGet, post, type Receiver, startReceiver, startRelay, track, waitFor } from '../../helpers'

// A reader that stops reading never slows ingest or delivery: 20,000 messages go through while
// its connection is stalled, every one acknowledged and delivered; what it could not take is
// skipped for it alone and announced when it reads again.

const MESSAGES = 20_000
const BATCH = 500

let receiver: Receiver
let relay: Relay
let stalled: Socket | undefined

beforeEach(async () => {
  receiver = await startReceiver()
  relay = await startRelay(receiver.url)
})
afterEach(async () => {
  stalled?.destroy()
  await relay.close()
  await receiver.close()
})

it('keeps ingest and delivery going past a stalled reader, and announces what it skipped', {
  timeout: 120_000,
}, async () => {
  const { hostname, port } = new URL(relay.url)
  const socket = connect(Number(port), hostname)
  stalled = socket
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()))
  socket.write(`GET /v1/stream HTTP/1.1\r\nHost: relay\r\nAuthorization: Bearer ${ADMIN_TOKEN}\r\n\r\n`)
  // The answer's head, then the reader stops reading.
  const head = await new Promise<string>((resolve) => socket.once('data', (chunk: Buffer) => resolve(chunk.toString())))
  expect(head).toMatch(/^HTTP\/1\.1 200/)
  socket.pause()

  let accepted = 0
  for (let sent = 0; sent < MESSAGES; sent += BATCH) {
    const batch = Array.from({ length: BATCH }, (_, i) =>
      track({ messageId: `stalled-${sent + i}`, properties: { pad: 'x'.repeat(200) } }),
    )
    const answer = await post(`${relay.url}/v1/batch`, { batch })
    expect(answer.status).toBe(200)
    accepted += answer.body.accepted
  }
  expect(accepted).toBe(MESSAGES)
  await waitFor(
    async () => {
      const { body } = await adminGet(`${relay.url}/v1/deliveries?status=pending&limit=1`)
      return body.deliveries.length === 0 && receiver.received.length >= MESSAGES ? true : undefined
    },
    'every message to be delivered',
    90_000,
  )
  expect(new Set(receiver.received.map((r) => r.body['messageId'])).size).toBe(MESSAGES)

  // The reader reads again: what it was sent, then the count of what was skipped for it.
  socket.resume()
  let skipped = 0
  let events = 0
  const body = (async function* () {
    for await (const chunk of socket) yield chunk as Buffer
  })()
  // One more message makes the relay write again (and so announce the skip) once the reader caught up.
  const poke = setInterval(() => void post(`${relay.url}/v1/track`, track()).catch(() => {}), 200)
  try {
    for await (const event of sseEvents(body)) {
      if (event.event === 'skipped') {
        skipped = (JSON.parse(event.data) as { count: number }).count
        break
      }
      events++
    }
  } finally {
    clearInterval(poke)
  }
  expect(skipped).toBeGreaterThan(0)
  // Ingested and attempt events for 20,000 messages: some were sent, the rest skipped.
  expect(events + skipped).toBeGreaterThanOrEqual(2 * MESSAGES)
})
