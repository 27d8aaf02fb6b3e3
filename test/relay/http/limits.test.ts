import { connect, type Socket } from 'node:net'
import { format } from 'node:util'
import createDebug from 'debug'
import { request } from 'undici'
import { afterEach, describe, expect, it } from 'vitest'
import { useLogLevel } from '../../../src/relay/log'
import type { Relay } from '../../../src/relay/index'
import {
  admin,
  basic,
  post,
  type Receiver,
  startReceiver,
  startRelay,
  track,
  waitFor,
  waitForDelivery,
} from '../helpers'

let receiver: Receiver
let relay: Relay
afterEach(async () => {
  await receiver.close()
  await relay.close()
})

/** Opens a raw connection to the relay, collecting what it answers and whether it closed. */
function rawClient(relayUrl: string): { socket: Socket; answer: () => string; closed: Promise<void> } {
  const socket = connect(Number(new URL(relayUrl).port), '127.0.0.1')
  let answer = ''
  socket.on('data', (chunk: Buffer) => (answer += chunk.toString()))
  socket.on('error', () => {}) // a reset after the relay cuts us off is expected
  return { socket, answer: () => answer, closed: new Promise((resolve) => socket.once('close', () => resolve())) }
}

/** Writes `text` a few bytes at a time until the socket closes. */
async function trickle(socket: Socket, text: string): Promise<void> {
  for (let i = 0; i < text.length && !socket.destroyed; i += 2) {
    socket.write(text.slice(i, i + 2))
    await new Promise((resolve) => setTimeout(resolve, 40))
  }
}

describe('slow clients', () => {
  it('cuts off a request whose headers trickle in, and keeps serving others', async () => {
    receiver = await startReceiver()
    relay = await startRelay(receiver.url, { headersTimeout: 300, requestTimeout: 600 })
    const slow = rawClient(relay.url)
    const trickling = trickle(
      slow.socket,
      `POST /v1/batch HTTP/1.1\r\nHost: relay\r\n${'X-Padding: aaaaaaaaaa\r\n'.repeat(100)}\r\n`,
    )
    // Meanwhile another client is served at once.
    expect((await post(`${relay.url}/v1/batch`, { batch: [track()] })).status).toBe(200)
    await slow.closed
    await trickling
    expect(slow.answer()).toMatch(/^HTTP\/1.1 408/)
  })

  it('cuts off a request whose body trickles in', async () => {
    receiver = await startReceiver()
    relay = await startRelay(receiver.url, { headersTimeout: 300, requestTimeout: 600 })
    const slow = rawClient(relay.url)
    const body = JSON.stringify({ batch: [track({ messageId: 'never' })] })
    slow.socket.write(
      `POST /v1/batch HTTP/1.1\r\nHost: relay\r\nAuthorization: ${basic('wk-test-web')}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`,
    )
    await trickle(slow.socket, body)
    await slow.closed
    expect(slow.answer()).toMatch(/^HTTP\/1.1 408/)
    expect((await post(`${relay.url}/v1/track`, { userId: 'u', event: 'E' })).status).toBe(200)
  })
})

describe('oversized headers', () => {
  it('answers 431 and keeps serving others', async () => {
    receiver = await startReceiver()
    relay = await startRelay(receiver.url, { maxHeaderSize: 4096 })
    const client = rawClient(relay.url)
    client.socket.write(`GET /healthz HTTP/1.1\r\nHost: relay\r\nX-Big: ${'a'.repeat(8000)}\r\n\r\n`)
    await client.closed
    expect(client.answer()).toMatch(/^HTTP\/1.1 431/)
    expect((await post(`${relay.url}/v1/track`, { userId: 'u', event: 'E' })).status).toBe(200)
  })
})

describe('logs', () => {
  it('never contain write keys, shared secrets or the admin token', async () => {
    const lines: string[] = []
    const previous = createDebug.log
    createDebug.log = (...args: unknown[]) => void lines.push(format(...args))
    createDebug.enable('tracklet:*')
    // Refusals and deliveries are one line each, at debug.
    const releaseLevel = useLogLevel('debug')
    try {
      receiver = await startReceiver()
      let calls = 0
      receiver.respond((_req, res) => res.writeHead(++calls === 1 ? 503 : 200).end())
      relay = await startRelay(receiver.url, {
        adminToken: 'SECRET-ADMIN-TOKEN',
        sources: [
          {
            name: 'web',
            writeKey: 'SECRET-WRITE-KEY',
            destinations: {
              Webhooks: {
                webhooks: [{ url: receiver.url, headers: { 'X-Api-Key': 'SECRET-HEADER' } }],
                sharedSecret: 'SECRET-SHARED',
              },
            },
          },
        ],
      })
      await post(
        `${relay.url}/v1/batch`,
        { batch: [track({ messageId: 'logged' }), { type: 'track' }] },
        { authorization: basic('SECRET-WRITE-KEY') },
      )
      await post(`${relay.url}/v1/batch`, { batch: [track()] }, { authorization: basic('SECRET-GUESSED-KEY') })
      await post(`${relay.url}/v1/deletions`, { userId: 'u1' }, { authorization: 'Bearer SECRET-WRONG-TOKEN' })
      await post(
        `${relay.url}/v1/deletions`,
        { userId: 'u1' },
        { ...admin, authorization: 'Bearer SECRET-ADMIN-TOKEN' },
      )
      try {
        await waitFor(() => (receiver.received.length >= 3 ? true : undefined), 'a retry and a delete at the receiver')
      } catch (error) {
        // Say what the relay did instead (the delivery log holds no secret).
        const { body } = await adminGetWith(relay.url, 'SECRET-ADMIN-TOKEN')
        throw new Error(
          `${(error as Error).message}; received ${receiver.received.length}; log: ${JSON.stringify(body.deliveries)}\nLINES:\n${lines.join('\n')}`,
        )
      }
      await relay.close()
    } finally {
      releaseLevel()
      createDebug.log = previous
      createDebug.disable()
    }
    expect(lines.join('\n')).toMatch(/dead-lettered|failed|delivered/)
    expect(lines.join('\n')).not.toMatch(/SECRET/)
  })
})

async function adminGetWith(relayUrl: string, token: string): Promise<{ body: any }> {
  const response = await request(`${relayUrl}/v1/deliveries`, { headers: { authorization: `Bearer ${token}` } })
  return { body: await response.body.json() }
}

describe('delivery log after a slow receiver', () => {
  it('records a receiver that does not answer in time as a timed-out attempt, and keeps the delivery pending', async () => {
    receiver = await startReceiver()
    let calls = 0
    receiver.respond((_req, res) => {
      if (++calls > 1) res.writeHead(200).end() // the first request never gets an answer
    })
    relay = await startRelay(receiver.url, { webhookTimeout: 100 })
    await post(`${relay.url}/v1/batch`, { batch: [track({ messageId: 'slow' })] })
    const delivery = await waitFor(async () => {
      const pending = await waitForDelivery(relay.url, 'pending', 'slow')
      return pending.attempts.length > 0 ? pending : undefined
    })
    expect(delivery.attempts[0].error).toMatch(/timed out after 100 ms/)
  })
})
