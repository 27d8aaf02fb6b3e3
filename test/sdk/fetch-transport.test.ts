import { gunzipSync } from 'node:zlib'
import { delay, HttpResponse, http } from 'msw'
import { setupServer } from 'msw/node'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { ANSWER_EXCERPT_BYTES } from '../../src/sdk/transport/transport'
import { FetchTransport } from '../../src/sdk/transport/fetch'

// The fetch builds' transport goes through the global `fetch`, which msw intercepts.
const URL_ = 'https://api.test/v1/batch'
const server = setupServer()
beforeAll(() => server.listen({ onUnhandledRequest: 'error' }))
afterEach(() => server.resetHandlers())
afterAll(() => server.close())

const body = new TextEncoder().encode('{"batch":[{"type":"track","event":"ü"}],"sentAt":"2026-01-01T00:00:00.000Z"}')

function transport(options: Partial<ConstructorParameters<typeof FetchTransport>[0]> = {}): FetchTransport {
  return new FetchTransport({
    url: URL_,
    writeKey: 'clé',
    timeout: 5000,
    gzip: false,
    userAgent: 'tracklet/test (web)',
    ...options,
  })
}

describe('the fetch transport', () => {
  it('POSTs the body with Basic auth (UTF-8 key), JSON and the User-Agent, and reports the answer', async () => {
    let seen: { headers: Headers; body: ArrayBuffer } | undefined
    server.use(
      http.post(URL_, async ({ request }) => {
        seen = { headers: request.headers, body: await request.arrayBuffer() }
        return new HttpResponse('{}', { status: 200 })
      }),
    )
    const outcome = await transport().send(body, new AbortController().signal)
    expect(outcome).toEqual({
      kind: 'response',
      status: 200,
      retryAfter: undefined,
      body: undefined,
      sent: body.length,
    })
    expect(seen!.headers.get('authorization')).toBe(`Basic ${Buffer.from('clé:').toString('base64')}`)
    expect(seen!.headers.get('content-type')).toBe('application/json')
    expect(seen!.headers.get('user-agent')).toBe('tracklet/test (web)')
    expect(Buffer.from(seen!.body)).toEqual(Buffer.from(body))
  })

  it('compresses with CompressionStream when gzip is on, and counts the compressed bytes as sent', async () => {
    let wire: Buffer | undefined
    server.use(
      http.post(URL_, async ({ request }) => {
        expect(request.headers.get('content-encoding')).toBe('gzip')
        wire = Buffer.from(await request.arrayBuffer())
        return new HttpResponse(null, { status: 204 })
      }),
    )
    const outcome = await transport({ gzip: true }).send(body, new AbortController().signal)
    expect(gunzipSync(wire!)).toEqual(Buffer.from(body))
    expect(outcome).toMatchObject({ kind: 'response', status: 204, sent: wire!.length })
  })

  it("keeps a refusal's Retry-After and the first bytes of its body, which say why", async () => {
    const long = `{"error":{"code":"ERR_SLOW_DOWN","message":"${'x'.repeat(10_000)}"}}`
    server.use(http.post(URL_, () => new HttpResponse(long, { status: 429, headers: { 'retry-after': '7' } })))
    const outcome = await transport().send(body, new AbortController().signal)
    expect(outcome).toMatchObject({ kind: 'response', status: 429, retryAfter: '7' })
    expect(outcome.kind === 'response' && outcome.body).toBe(long.slice(0, ANSWER_EXCERPT_BYTES))
  })

  it('reports a timeout when no answer comes in time', async () => {
    server.use(
      http.post(URL_, async () => {
        await delay('infinite')
        return new HttpResponse(null)
      }),
    )
    const outcome = await transport({ timeout: 50 }).send(body, new AbortController().signal)
    expect(outcome.kind).toBe('timeout')
  })

  it('reports a network error, and the client closing as one', async () => {
    server.use(http.post(URL_, () => HttpResponse.error()))
    expect((await transport().send(body, new AbortController().signal)).kind).toBe('network-error')

    server.use(
      http.post(URL_, async () => {
        await delay('infinite')
        return new HttpResponse(null)
      }),
    )
    const closing = new AbortController()
    const pending = transport().send(body, closing.signal)
    closing.abort()
    const outcome = await pending
    expect(outcome.kind).toBe('network-error')
    expect(outcome.kind === 'network-error' && String(outcome.error)).toMatch(/closing/)
  })

  it('follows no redirect: a 3xx is an answer (not retried, not followed)', async () => {
    server.use(
      http.post(URL_, () => new HttpResponse(null, { status: 307, headers: { location: 'https://elsewhere.test/' } })),
    )
    const outcome = await transport().send(body, new AbortController().signal)
    expect(outcome).toMatchObject({ kind: 'response', status: 307 })
  })
})
