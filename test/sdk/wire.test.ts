import type { ServerResponse } from 'node:http'
import { Agent, type Dispatcher, request } from 'undici'
import { afterEach, describe, expect, it } from 'vitest'
import { Analytics, type AnalyticsError, MAX_BATCH_BYTES } from '../../src/index'
import { type Receiver, startReceiver, status } from './helpers/receiver'
import { settled } from './helpers/settle'
import { waitFor } from '../support/wait-for'

let receiver: Receiver
let analytics: Analytics | undefined

afterEach(async () => {
  await analytics?.closeAndFlush({ timeout: 1000 })
  analytics = undefined
  await receiver.close()
})

function client(options: ConstructorParameters<typeof Analytics>[1] = {}): Analytics {
  analytics = new Analytics('secret-key', { endpoint: receiver.endpoint, ...options })
  return analytics
}

/** Resolves once `predicate` holds (the suites' one polling helper; no wall-clock assertion). */
const until = (predicate: () => boolean): Promise<true> => waitFor(() => (predicate() ? true : undefined))

const ISO_UTC_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

describe('the request', () => {
  it('is POST {endpoint}/v1/batch with Basic auth, JSON, a User-Agent and { batch, sentAt }', async () => {
    receiver = await startReceiver()
    const analytics = client()
    analytics.track({ userId: '42', event: 'Order Completed', properties: { revenue: '9.99' } })
    analytics.identify({ userId: '42', traits: { plan: 'pro' } })
    await analytics.flush()

    expect(receiver.requests).toHaveLength(1)
    const [request] = receiver.requests
    expect(request!.method).toBe('POST')
    expect(request!.url).toBe('/v1/batch')
    expect(request!.headers['authorization']).toBe(`Basic ${Buffer.from('secret-key:').toString('base64')}`)
    expect(request!.headers['content-type']).toBe('application/json')
    expect(request!.headers['content-encoding']).toBeUndefined() // gzip is off by default
    expect(request!.headers['user-agent']).toMatch(/^tracklet\/0\.1\.0 \(node v\d+/)
    expect(Object.keys(request!.json)).toEqual(['batch', 'sentAt'])
    expect(request!.json.sentAt).toMatch(ISO_UTC_MS)
    expect(request!.json.batch.map((message) => message.type)).toEqual(['track', 'identify'])
    expect(request!.body.length).toBe(Number(request!.headers['content-length']))
  })

  it('sends each body exactly when a shorter one follows a longer one in a reused buffer', async () => {
    receiver = await startReceiver()
    const analytics = client({ flushAt: 1 })
    analytics.track({ userId: 'u', event: 'long', properties: { text: 'é'.repeat(5000) } })
    await analytics.flush()
    analytics.track({ userId: 'u', event: 'short' })
    await analytics.flush()

    const [long, short] = receiver.requests
    expect(long!.json.batch[0]).toMatchObject({ event: 'long', properties: { text: 'é'.repeat(5000) } })
    expect(short!.json.batch).toHaveLength(1)
    expect(short!.json.batch[0]).toMatchObject({ event: 'short' })
    expect(short!.body.length).toBe(Number(short!.headers['content-length']))
    expect(short!.body.length).toBeLessThan(long!.body.length)
  })

  it('never overwrites a body an injected dispatcher may still hold (a MockAgent records them)', async () => {
    receiver = await startReceiver()
    /** An Agent that keeps every request body it is handed, as call-history recorders do. */
    class RecordingAgent extends Agent {
      readonly bodies: Buffer[] = []
      override dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
        this.bodies.push(options.body as Buffer)
        return super.dispatch(options, handler)
      }
    }
    const dispatcher = new RecordingAgent()
    const analytics = new Analytics('k', { endpoint: receiver.endpoint, dispatcher, flushAt: 1 })
    try {
      analytics.track({ userId: 'u', event: 'first', properties: { text: 'x'.repeat(2000) } })
      await analytics.flush()
      analytics.track({ userId: 'u', event: 'second' })
      await analytics.flush()
      // What the dispatcher kept is still exactly what the receiver got.
      expect(dispatcher.bodies.map((body) => body.toString('utf8'))).toEqual(
        receiver.requests.map((request) => request.body.toString('utf8')),
      )
    } finally {
      await analytics.closeAndFlush()
      await dispatcher.close()
    }
  })

  it('keeps a path prefix of the endpoint and reuses one keep-alive connection', async () => {
    const ports = new Set<number | undefined>()
    receiver = await startReceiver((_request, response) => {
      ports.add(response.socket?.remotePort)
      response.end('{}')
    })
    const analytics = new Analytics('k', { endpoint: `${receiver.endpoint}/prefix/`, flushAt: 1 })
    try {
      for (let i = 0; i < 5; i++) {
        analytics.track({ userId: 'u', event: `e${i}` })
        await analytics.flush()
      }
      expect(receiver.requests.map((request) => request.url)).toEqual(Array(5).fill('/prefix/v1/batch'))
      // Connections are reused (undici may open a second one while the first is being freed).
      expect(ports.size).toBeLessThanOrEqual(2)
    } finally {
      await analytics.closeAndFlush()
    }
  })
})

describe('flushing', () => {
  it('sends a batch once flushAt messages are queued, without flush()', async () => {
    receiver = await startReceiver()
    const analytics = client({ flushAt: 3 })
    for (let i = 0; i < 7; i++) analytics.track({ userId: 'u', event: `e${i}` })
    await until(() => receiver.requests.length === 2)
    expect(receiver.requests.map((request) => request.json.batch.length)).toEqual([3, 3])
    expect(analytics.stats().queued + analytics.stats().inFlight + analytics.stats().delivered).toBe(7)
  })

  it('sends every call at once with flushAt: 1 and after analytics.size = 1', async () => {
    receiver = await startReceiver()
    const analytics = client()
    analytics.size = 1
    analytics.track({ userId: 'u', event: 'one' })
    await until(() => receiver.requests.length === 1)
    expect(receiver.messages().map((message) => message.event)).toEqual(['one'])
  })

  it.each([
    ['flush()', async (a: Analytics) => a.flush()],
    ['closeAndFlush()', async (a: Analytics) => a.closeAndFlush()],
  ])('never sends a body over 500,000 bytes, triggered by %s', async (_trigger, trigger) => {
    receiver = await startReceiver()
    // 40 messages of ~30 KB: 1.2 MB, over two bodies' worth.
    const analytics = client({ flushAt: 40 })
    const pad = 'x'.repeat(30_000)
    for (let i = 0; i < 40; i++) analytics.track({ userId: 'u', event: `e${i}`, properties: { pad } })
    await trigger(analytics)
    await until(() => receiver.messages().length === 40)
    expect(receiver.requests.length).toBeGreaterThanOrEqual(3)
    for (const request of receiver.requests) expect(request.body.length).toBeLessThanOrEqual(MAX_BATCH_BYTES)
    // Up to 4 requests are in flight at once, so bodies may arrive in any order: each message
    // arrives exactly once, and in order within its body.
    const events = receiver.messages().map((message) => message.event as string)
    expect([...events].sort()).toEqual(Array.from({ length: 40 }, (_, i) => `e${i}`).sort())
    for (const request of receiver.requests) {
      const numbers = request.json.batch.map((message) => Number((message.event as string).slice(1)))
      expect(numbers).toEqual([...numbers].sort((a, b) => a - b))
    }
  })

  it('never sends a body over 500,000 bytes when flushAt fills a body to the brim', async () => {
    receiver = await startReceiver()
    // 16 messages of ~31 KB make a body just under 500,000 bytes.
    const analytics = client({ flushAt: 16 })
    const pad = 'x'.repeat(31_000 - 200)
    for (let i = 0; i < 32; i++) analytics.track({ userId: 'u', event: `e${i}`, properties: { pad } })
    await until(() => receiver.messages().length === 32)
    expect(receiver.requests.map((request) => request.json.batch.length)).toEqual([16, 16])
    for (const request of receiver.requests) {
      expect(request.body.length).toBeLessThanOrEqual(MAX_BATCH_BYTES)
      expect(request.body.length).toBeGreaterThan(490_000)
    }
  })

  it('with gzip: true, sends the batch gzip-compressed with Content-Encoding: gzip', async () => {
    receiver = await startReceiver()
    const analytics = client({ gzip: true })
    analytics.track({ userId: '42', event: 'Order Completed', properties: { revenue: '9.99', note: 'é'.repeat(2000) } })
    analytics.identify({ userId: '42', traits: { plan: 'pro' } })
    await analytics.flush()

    expect(receiver.requests).toHaveLength(1)
    const [request] = receiver.requests
    expect(request!.headers['content-encoding']).toBe('gzip')
    expect(request!.headers['content-type']).toBe('application/json')
    expect(request!.headers['authorization']).toBe(`Basic ${Buffer.from('secret-key:').toString('base64')}`)
    // The receiver gunzipped the body: it is the same { batch, sentAt } as without gzip.
    expect(Object.keys(request!.json)).toEqual(['batch', 'sentAt'])
    expect(request!.json.batch).toEqual([
      expect.objectContaining({
        type: 'track',
        event: 'Order Completed',
        properties: { revenue: '9.99', note: 'é'.repeat(2000) },
      }),
      expect.objectContaining({ type: 'identify', traits: { plan: 'pro' } }),
    ])
    expect(request!.wireBody.length).toBe(Number(request!.headers['content-length']))
    expect(request!.wireBody.length).toBeLessThan(request!.body.length / 4)
  })

  it('with gzip: true, splits batches on the uncompressed body, exactly as without gzip', async () => {
    const sizes: Record<string, number[][]> = {}
    for (const gzip of [false, true]) {
      receiver = await startReceiver()
      // 48 compressible messages of ~31 KB: 16 make an uncompressed body just under 500,000
      // bytes, though gzip would fit them all in one body of a few kilobytes.
      const analytics = client({ flushAt: 100, gzip })
      const pad = 'x'.repeat(31_000 - 200)
      for (let i = 0; i < 48; i++) analytics.track({ userId: 'u', event: `e${i}`, properties: { pad } })
      await analytics.closeAndFlush()
      sizes[String(gzip)] = receiver.requests.map((request) => [request.json.batch.length, request.body.length])
      for (const request of receiver.requests) {
        expect(request.headers['content-encoding']).toBe(gzip ? 'gzip' : undefined)
        expect(request.body.length).toBeLessThanOrEqual(MAX_BATCH_BYTES)
      }
      // The three requests are in flight together and may arrive in any order: compare the set,
      // and each batch as a run of consecutive events.
      const events = receiver.messages().map((message) => Number(String(message.event).slice(1)))
      expect([...events].sort((a, b) => a - b)).toEqual(Array.from({ length: 48 }, (_, i) => i))
      for (const request of receiver.requests) {
        const batch = request.json.batch.map((message) => Number(String(message.event).slice(1)))
        expect(batch).toEqual(Array.from({ length: batch.length }, (_, i) => batch[0]! + i))
      }
      await receiver.close()
    }
    expect(sizes['true']!.map(([count]) => count)).toEqual([16, 16, 16])
    const byteLengths = (gzip: string) => sizes[gzip]!.map(([, bytes]) => bytes).sort((a, b) => a! - b!)
    expect(byteLengths('true')).toEqual(byteLengths('false'))
    receiver = await startReceiver() // for afterEach
  })

  it('concurrent flush() calls wait for everything queued before them, batches in flight included', async () => {
    const held: ServerResponse[] = []
    receiver = await startReceiver((_request, response) => held.push(response))
    const analytics = client()
    const first = settled()
    analytics.track({ userId: 'u', event: 'first' }, first.callback)
    let firstFlushDone = false
    const firstFlush = analytics.flush().then(() => (firstFlushDone = true))
    await until(() => held.length === 1)
    expect(analytics.stats()).toMatchObject({ queued: 0, inFlight: 1, delivered: 0, failed: 0, requests: 1 })
    const second = settled()
    analytics.track({ userId: 'u', event: 'second' }, second.callback)
    let secondFlushDone = false
    const secondFlush = analytics.flush().then(() => (secondFlushDone = true))
    await until(() => held.length === 2)

    held[1]!.end('{}')
    await second.result
    await new Promise((resolve) => setTimeout(resolve, 20))
    // The second request is done, but the first one, queued before both flushes, is not.
    expect(firstFlushDone).toBe(false)
    expect(secondFlushDone).toBe(false)

    held[0]!.end('{}')
    await Promise.all([firstFlush, secondFlush])
    expect((await first.result).err).toBeUndefined()
    expect(analytics.stats()).toMatchObject({
      queued: 0,
      inFlight: 0,
      delivered: 2,
      failed: 0,
      requests: 2,
      retries: 0,
    })
    // Idempotent: with nothing queued, flush() resolves at once.
    await analytics.flush()
  })
})

describe('answers', () => {
  it('splits a batch the server refuses with 413 until every message is delivered', async () => {
    receiver = await startReceiver((request, response) => {
      response.statusCode = request.body.length > 100_000 ? 413 : 200
      response.end()
    })
    const analytics = client({ flushAt: 100 })
    const pad = 'y'.repeat(20_000)
    const results = Array.from({ length: 12 }, (_, i) => {
      const { callback, result } = settled()
      analytics.track({ userId: 'u', event: `e${i}`, properties: { pad } }, callback)
      return result
    })
    await analytics.flush()
    for (const { err } of await Promise.all(results)) expect(err).toBeUndefined()
    const accepted = receiver.requests.filter((request) => request.body.length <= 100_000)
    expect(accepted.flatMap((request) => request.json.batch.map((message) => message.event))).toEqual(
      Array.from({ length: 12 }, (_, i) => `e${i}`),
    )
    expect(receiver.requests.length).toBeGreaterThan(accepted.length)
  })

  it('retries a 5xx with the same messageIds, then delivers', async () => {
    receiver = await startReceiver((request, response, index) =>
      index === 0 ? status(503)(request, response, index) : response.end('{}'),
    )
    const analytics = client()
    const { callback, result } = settled()
    analytics.track({ userId: 'u', event: 'retried' }, callback)
    await analytics.flush()
    expect((await result).err).toBeUndefined()
    expect(receiver.requests).toHaveLength(2)
    const [first, second] = receiver.requests.map((request) => request.json.batch[0]!.messageId)
    expect(second).toBe(first)
    // Both requests counted, the second as a retry, with every body byte the receiver read.
    const bytesSent = receiver.requests.reduce((sum, request) => sum + request.body.length, 0)
    expect(analytics.stats()).toEqual({
      queued: 0,
      inFlight: 0,
      delivered: 1,
      failed: 0,
      filtered: 0,
      requests: 2,
      retries: 1,
      bytesSent,
    })
  })

  it('does not retry a 400, and reports ERR_DELIVERY with the status', async () => {
    receiver = await startReceiver(status(400))
    const analytics = client()
    const errors: AnalyticsError[] = []
    analytics.on('error', (error) => errors.push(error))
    const { callback, result } = settled()
    analytics.track({ userId: 'u', event: 'refused' }, callback)
    await analytics.flush()
    const { err, message } = await result
    expect(receiver.requests).toHaveLength(1)
    expect(err).toMatchObject({ code: 'ERR_DELIVERY', status: 400, attempts: 1 })
    expect(err?.message).toBe(`delivery failed: POST ${receiver.endpoint}/v1/batch: HTTP 400`)
    expect(err?.analyticsMessage).toEqual(message)
    expect(errors).toEqual([err])
    expect(analytics.stats().failed).toBe(1)
  })

  it('reports a network error after its retries with no status and the cause kept', async () => {
    receiver = await startReceiver()
    const endpoint = receiver.endpoint
    await receiver.close()
    receiver = await startReceiver()
    const analytics = new Analytics('k', { endpoint, maxRetries: 0 })
    const { callback, result } = settled()
    analytics.track({ userId: 'u', event: 'unreachable' }, callback)
    await analytics.closeAndFlush()
    const { err } = await result
    expect(err).toMatchObject({ code: 'ERR_DELIVERY', status: undefined, attempts: 1 })
    expect(err?.message).toMatch(/network error: ECONNREFUSED/)
    expect(err?.cause).toMatchObject({ code: 'ECONNREFUSED' })
  })

  it('bounds memory during an outage with ERR_QUEUE_FULL, and delivers the rest after recovery', async () => {
    let down = true
    receiver = await startReceiver((request, response, index) =>
      down ? status(503)(request, response, index) : response.end('{}'),
    )
    const analytics = client({ flushAt: 2, maxQueueSize: 6 })
    const results = Array.from({ length: 10 }, (_, i) => {
      const { callback, result } = settled()
      analytics.track({ userId: 'u', event: `e${i}` }, callback)
      return result
    })
    expect(analytics.stats().queued + analytics.stats().inFlight).toBe(6)
    await until(() => receiver.requests.length >= 3)
    down = false
    await analytics.flush()
    const outcomes = (await Promise.all(results)).map(({ err }) => err?.code ?? 'delivered')
    expect(outcomes).toEqual([...Array(6).fill('delivered'), ...Array(4).fill('ERR_QUEUE_FULL')])
    expect(
      new Set(
        receiver
          .messages()
          .filter((_, i) => i >= 0)
          .map((message) => message.event),
      ),
    ).toEqual(new Set(['e0', 'e1', 'e2', 'e3', 'e4', 'e5']))
    expect(analytics.stats()).toMatchObject({ queued: 0, inFlight: 0, delivered: 6, failed: 4, filtered: 0 })
    // Room again: new calls are taken.
    const later = settled()
    analytics.track({ userId: 'u', event: 'after' }, later.callback)
    await analytics.flush()
    expect((await later.result).err).toBeUndefined()
  })
})

describe('closeAndFlush', () => {
  it('holds one shared beforeExit listener while clients have messages, and none once they are closed', async () => {
    receiver = await startReceiver()
    const before = process.listenerCount('beforeExit')
    const first = client()
    const second = new Analytics('k', { endpoint: receiver.endpoint })
    expect(process.listenerCount('beforeExit')).toBe(before)
    first.track({ userId: 'u', event: 'a' })
    second.track({ userId: 'u', event: 'b' })
    expect(process.listenerCount('beforeExit')).toBe(before + 1)
    await first.closeAndFlush()
    expect(process.listenerCount('beforeExit')).toBe(before + 1)
    await second.closeAndFlush()
    expect(process.listenerCount('beforeExit')).toBe(before)
  })

  it('leaves an injected dispatcher open for its owner', async () => {
    receiver = await startReceiver()
    const dispatcher = new Agent()
    const analytics = new Analytics('k', { endpoint: receiver.endpoint, dispatcher })
    analytics.track({ userId: 'u', event: 'through the injected agent' })
    await analytics.closeAndFlush()
    expect(receiver.messages()).toHaveLength(1)
    const response = await request(`${receiver.endpoint}/v1/batch`, {
      method: 'POST',
      body: '{"batch":[]}',
      dispatcher,
    })
    expect(response.statusCode).toBe(200)
    await response.body.dump()
    await dispatcher.close()
  })

  it('resolves by its timeout against a server that never answers, failing what is left with ERR_CLOSED', async () => {
    receiver = await startReceiver(() => undefined)
    const analytics = client()
    const { callback, result } = settled()
    analytics.track({ userId: 'u', event: 'stuck' }, callback)
    await analytics.closeAndFlush({ timeout: 100 })
    const { err } = await result
    expect(err?.code).toBe('ERR_CLOSED')
    expect(analytics.stats()).toMatchObject({ queued: 0, inFlight: 0, delivered: 0, failed: 1 })
    // Idempotent: the same settled promise.
    await analytics.closeAndFlush()
  })

  it('resolves by its timeout while a connection is still being opened', async () => {
    receiver = await startReceiver()
    // A connector that never completes: undici hands over no request controller until it does.
    const neverConnects = new Agent({ connect: () => undefined })
    const analytics = new Analytics('k', { endpoint: receiver.endpoint, dispatcher: neverConnects })
    const { callback, result } = settled()
    analytics.track({ userId: 'u', event: 'stuck connecting' }, callback)
    await analytics.closeAndFlush({ timeout: 100 })
    expect((await result).err?.code).toBe('ERR_CLOSED')
    expect(receiver.requests).toHaveLength(0)
    await neverConnects.destroy()
  })

  it('counts connecting against the request timeout', async () => {
    receiver = await startReceiver()
    const neverConnects = new Agent({ connect: () => undefined })
    const analytics = new Analytics('k', {
      endpoint: receiver.endpoint,
      dispatcher: neverConnects,
      timeout: 50,
      maxRetries: 0,
    })
    const { callback, result } = settled()
    analytics.track({ userId: 'u', event: 'stuck connecting' }, callback)
    const { err } = await result
    expect(err?.code).toBe('ERR_DELIVERY')
    expect(err?.message).toMatch(/timed out/)
    await analytics.closeAndFlush({ timeout: 0 })
    await neverConnects.destroy()
  })

  it('waits as long as delivery takes with timeout: Infinity (not 1 ms, as a raw setTimeout would)', async () => {
    receiver = await startReceiver((_request, response) => setTimeout(() => response.end('{}'), 100))
    const analytics = client()
    const { callback, result } = settled()
    analytics.track({ userId: 'u', event: 'slow but fine' }, callback)
    await analytics.closeAndFlush({ timeout: Number.POSITIVE_INFINITY })
    expect((await result).err).toBeUndefined()
    expect(analytics.stats()).toMatchObject({ delivered: 1, failed: 0 })
  })

  it('takes null options (from JavaScript) as the defaults', async () => {
    receiver = await startReceiver()
    const analytics = client()
    analytics.track({ userId: 'u', event: 'e' })
    await analytics.closeAndFlush(null as unknown as undefined)
    expect(receiver.messages()).toHaveLength(1)
  })

  it('takes a timeout of 0 as "give up now", and refuses a negative one with a TypeError', async () => {
    receiver = await startReceiver(() => undefined)
    const analytics = client()
    const { callback, result } = settled()
    analytics.track({ userId: 'u', event: 'stuck' }, callback)
    expect(() => analytics.closeAndFlush({ timeout: -1 })).toThrow(
      new TypeError('timeout must be a number of milliseconds of at least 0, got number -1'),
    )
    await analytics.closeAndFlush({ timeout: 0 })
    expect((await result).err?.code).toBe('ERR_CLOSED')
  })
})
