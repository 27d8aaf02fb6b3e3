import { afterEach, describe, expect, it, vi } from 'vitest'
import { type DeliverableMessage, WebhookConfigError, WebhookDestination } from '../../src/webhooks/index'
import { startReceiver, type TestReceiver } from './receiver'

// How long the receiver may take to see a dropped socket close: vi.waitFor's default (1 s) is
// shorter than a stall of a busy machine running three test files at once (CI met it). A socket
// that is never dropped still fails the test.
const SOCKET_CLOSED = { timeout: 10_000, interval: 20 }

// What a failed request keeps of the receiver's answer and of what was sent: the start of the
// body (bounded, the rest drained or the socket dropped) and the headers without any secret.
const message: DeliverableMessage = {
  type: 'track',
  messageId: 'msg-1',
  userId: 'u-1',
  event: 'Order Completed',
  timestamp: '2026-01-02T03:04:05.678Z',
}

const open: TestReceiver[] = []
async function receiver(status: number, body: string | Buffer): Promise<TestReceiver> {
  const started = await startReceiver((_req, res) => {
    res.writeHead(status, { 'Content-Type': 'application/json' })
    res.end(body)
  })
  open.push(started)
  return started
}
afterEach(async () => {
  await Promise.all(open.splice(0).map((item) => item.close()))
})

describe('a failed request keeps what the receiver said', () => {
  it("keeps a 500's body and the headers sent, the signature shown as present and configured values redacted", async () => {
    const hook = await receiver(500, '{"error":"db pool exhausted"}')
    const webhooks = new WebhookDestination({
      webhooks: [{ url: hook.url, headers: { Authorization: 'Bearer tok-123', 'X-Team': 'growth' } }],
      sharedSecret: 's3cret',
    })

    const [attempt] = (await webhooks.send(message)).attempts

    expect(attempt).toEqual({
      url: hook.url,
      status: 500,
      ms: expect.any(Number),
      responseBody: '{"error":"db pool exhausted"}',
      requestHeaders: {
        'User-Agent': 'Tracklet/1.0',
        'Content-Type': 'application/json',
        Authorization: '(redacted)',
        'X-Team': '(redacted)',
        'X-Signature': '(present)',
      },
    })
    const kept = JSON.stringify(attempt)
    expect(kept).not.toContain('tok-123')
    expect(kept).not.toContain(hook.requests[0]!.headers['x-signature'])
  })

  it('keeps nothing more of a 2xx answer than before', async () => {
    const hook = await receiver(200, 'fine')
    const [attempt] = (await new WebhookDestination({ webhooks: [{ url: hook.url }] }).send(message)).attempts
    expect(attempt).toEqual({ url: hook.url, status: 200, ms: expect.any(Number) })
  })

  it('keeps the first 4 KB by default, draining a moderate rest so the connection is reused', async () => {
    const hook = await receiver(503, 'a'.repeat(10_000))
    const webhooks = new WebhookDestination({ webhooks: [{ url: hook.url }] })

    const bodies: (string | undefined)[] = []
    for (let i = 0; i < 4; i++) bodies.push((await webhooks.send(message)).attempts[0]?.responseBody)

    expect(bodies).toEqual(Array(4).fill('a'.repeat(4096)))
    // Four requests one after another, fewer connections made: drained, they went back to the pool.
    expect(hook.accepted()).toBeLessThan(4)
  })

  it('reads no more than it may of a huge answer: the socket is dropped, not read to the end', async () => {
    const hook = await receiver(500, Buffer.alloc(8 * 1024 * 1024, 'b'))
    const webhooks = new WebhookDestination({ webhooks: [{ url: hook.url }] }, { responseBodyLimit: 100 })

    const [attempt] = (await webhooks.send(message)).attempts

    expect(attempt?.responseBody).toBe('b'.repeat(100))
    await vi.waitFor(async () => expect(await hook.connections()).toBe(0), SOCKET_CLOSED)
  })

  it('drains a moderate 2xx body unread so the connection is reused, and drops the socket under a huge one', async () => {
    const moderate = await receiver(200, 'm'.repeat(10_000))
    const webhooks = new WebhookDestination({ webhooks: [{ url: moderate.url }] })
    for (let i = 0; i < 4; i++) expect((await webhooks.send(message)).attempts[0]).not.toHaveProperty('responseBody')
    expect(moderate.accepted()).toBeLessThan(4)

    // Announced larger than the drain limit, and sent without a length: neither is read to the end.
    const huge = await receiver(200, Buffer.alloc(8 * 1024 * 1024, 'h'))
    const chunked = await startReceiver((_req, res) => {
      res.writeHead(200)
      res.write(Buffer.alloc(128 * 1024, 'c'))
    })
    open.push(chunked)
    for (const hook of [huge, chunked]) {
      const result = await new WebhookDestination({ webhooks: [{ url: hook.url }] }).send(message)
      expect(result).toMatchObject({ ok: true, attempts: [{ url: hook.url, status: 200 }] })
      await vi.waitFor(async () => expect(await hook.connections()).toBe(0), SOCKET_CLOSED)
    }
  })

  it('a failure whose body stalls keeps its status and the start that came, once the timeout runs out', async () => {
    const hook = await startReceiver((_req, res) => {
      res.writeHead(502)
      res.write('upstream gone')
    })
    open.push(hook)
    const webhooks = new WebhookDestination({ webhooks: [{ url: hook.url }] }, { timeout: 200 })

    const result = await webhooks.send(message)

    expect(result).toMatchObject({
      ok: false,
      retryable: true,
      attempts: [{ url: hook.url, status: 502, responseBody: 'upstream gone' }],
    })
    await vi.waitFor(async () => expect(await hook.connections()).toBe(0), SOCKET_CLOSED)
  })

  it('counts the limit in bytes: a character cut at the limit shows as U+FFFD', async () => {
    const hook = await receiver(500, 'é'.repeat(10))
    const webhooks = new WebhookDestination({ webhooks: [{ url: hook.url }] }, { responseBodyLimit: 5 })
    const [attempt] = (await webhooks.send(message)).attempts
    expect(attempt?.responseBody).toBe('éé\uFFFD')
  })

  it('keeps no body with a limit of 0, but still the headers', async () => {
    const hook = await receiver(500, 'secret-free body')
    const webhooks = new WebhookDestination({ webhooks: [{ url: hook.url }] }, { responseBodyLimit: 0 })
    const [attempt] = (await webhooks.send(message)).attempts
    expect(attempt).not.toHaveProperty('responseBody')
    expect(attempt?.requestHeaders).toEqual({ 'User-Agent': 'Tracklet/1.0', 'Content-Type': 'application/json' })
    // The connection is released as before.
    expect(await hook.connections()).toBe(1)
  })

  it('keeps the headers of a request that got no answer, Standard Webhooks signatures as present', async () => {
    const webhooks = new WebhookDestination({
      webhooks: [{ url: 'http://127.0.0.1:9/hook' }],
      sharedSecret: 's3cret',
      standardWebhooks: true,
    })
    const [attempt] = (await webhooks.send(message)).attempts
    expect(attempt?.error).toBeDefined()
    expect(attempt?.requestHeaders).toMatchObject({
      'X-Signature': '(present)',
      'webhook-id': 'msg-1',
      'webhook-timestamp': expect.stringMatching(/^\d+$/),
      'webhook-signature': '(present)',
    })
  })

  it.each([-1, 1.5, 65_537, '4096'])('refuses responseBodyLimit %j, naming it', (limit) => {
    expect(
      () =>
        new WebhookDestination({ webhooks: [{ url: 'https://a.example/' }] }, { responseBodyLimit: limit as number }),
    ).toThrow(
      expect.objectContaining({
        name: WebhookConfigError.name,
        message: expect.stringContaining('options.responseBodyLimit: must be a whole number of bytes from 0 to 65536'),
      }),
    )
  })
})
