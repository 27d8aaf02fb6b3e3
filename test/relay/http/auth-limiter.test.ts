import { type IncomingMessage, request as httpRequest } from 'node:http'
import { request } from 'undici'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { AUTH_FAILURE_WINDOW_MS, AuthLimiter, MAX_AUTH_FAILURES } from '../../../src/relay/http/auth-limiter'
import { HttpError } from '../../../src/relay/http/http-error'
import type { Relay } from '../../../src/relay/index'
import { addLogSink, type LogEvent } from '../../../src/relay/log'
import { ADMIN_TOKEN, basic, startRelay, track, WRITE_KEY } from '../helpers'
import { PageClient } from '../console/page-client'

const requestFrom = (address: string, forwardedFor?: string): IncomingMessage =>
  ({
    headers: forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor },
    socket: { remoteAddress: address },
  }) as unknown as IncomingMessage

const unauthorized = (): never => {
  throw new HttpError(401, 'ERR_UNAUTHORIZED', 'wrong token')
}

function statusOf(run: () => void): number | undefined {
  try {
    run()
    return undefined
  } catch (error) {
    return (error as HttpError).status
  }
}

describe('AuthLimiter', () => {
  let lines: LogEvent[]
  let removeSink: () => void
  beforeEach(() => {
    vi.useFakeTimers()
    lines = []
    removeSink = addLogSink((event) => lines.push(event))
  })
  afterEach(() => {
    removeSink()
    vi.useRealTimers()
  })

  it(`answers 429 with Retry-After after ${MAX_AUTH_FAILURES} failures, to that address only, until the window ends`, () => {
    const limiter = new AuthLimiter({ trustProxy: false })
    const guesser = requestFrom('10.0.0.1')
    for (let i = 0; i < MAX_AUTH_FAILURES; i++)
      expect(statusOf(() => limiter.guard(guesser, 'admin API: token', unauthorized))).toBe(401)
    let refused: HttpError | undefined
    let ran = false
    try {
      limiter.guard(guesser, 'admin API: token', () => {
        ran = true
      })
    } catch (error) {
      refused = error as HttpError
    }
    // Refused before the credential is even looked at: a right guess now would not pay.
    expect(ran).toBe(false)
    expect(refused).toMatchObject({ status: 429, code: 'ERR_TOO_MANY_FAILURES', headers: { 'retry-after': '60' } })
    // Another address is not slowed.
    expect(limiter.guard(requestFrom('10.0.0.2'), 'admin API: token', () => 'ok')).toBe('ok')

    vi.advanceTimersByTime(AUTH_FAILURE_WINDOW_MS / 2)
    expect(statusOf(() => limiter.refuseIfLimited(guesser, 'admin API: token'))).toBe(429)
    vi.advanceTimersByTime(AUTH_FAILURE_WINDOW_MS / 2)
    expect(limiter.guard(guesser, 'admin API: token', () => 'ok')).toBe('ok')
    limiter.stop()
  })

  it('logs the refusals of each address as one warning per window, never one per request', async () => {
    const limiter = new AuthLimiter({ trustProxy: false })
    for (let i = 0; i < 50; i++)
      statusOf(() => limiter.guard(requestFrom('10.0.0.1'), 'ingest: write key', unauthorized))
    statusOf(() => limiter.guard(requestFrom('10.0.0.2'), 'operator page: sign-in', unauthorized))
    expect(lines).toEqual([])
    await vi.advanceTimersByTimeAsync(AUTH_FAILURE_WINDOW_MS)
    expect(lines.map((line) => [line.level, line.msg])).toEqual([
      ['warn', `ingest: write key refused 50 times from 10.0.0.1 (over ${MAX_AUTH_FAILURES} failures: answered 429)`],
      ['warn', 'operator page: sign-in refused 1 time from 10.0.0.2'],
    ])
    expect(lines[0]!.fields).toMatchObject({ event: 'auth-refused', address: '10.0.0.1', count: 50 })
    limiter.stop()
  })

  it('reads the address the proxy saw (the last of X-Forwarded-For) only with trustProxy', () => {
    const behindProxy = new AuthLimiter({ trustProxy: true })
    const direct = new AuthLimiter({ trustProxy: false })
    for (let i = 0; i < MAX_AUTH_FAILURES; i++) {
      // A client may prepend anything; the proxy appends the address it saw.
      const req = requestFrom('10.9.9.9', `${i}.1.1.1, 203.0.113.7`)
      statusOf(() => behindProxy.guard(req, 'metrics: token', unauthorized))
      statusOf(() => direct.guard(req, 'metrics: token', unauthorized))
    }
    expect(statusOf(() => behindProxy.refuseIfLimited(requestFrom('10.9.9.9', '203.0.113.7'), 'metrics: token'))).toBe(
      429,
    )
    expect(statusOf(() => behindProxy.refuseIfLimited(requestFrom('10.9.9.9', '198.51.100.1'), 'metrics: token'))).toBe(
      undefined,
    )
    // Without trustProxy the header is ignored: changing it does not escape the limit.
    expect(statusOf(() => direct.refuseIfLimited(requestFrom('10.9.9.9', '198.51.100.1'), 'metrics: token'))).toBe(429)
    behindProxy.stop()
    direct.stop()
  })
})

describe('failed authentication on the wire, per client address', () => {
  let relay: Relay
  beforeEach(async () => {
    relay = await startRelay('http://127.0.0.1:1/hook', { metricsToken: 'metrics-token-for-tests' })
  })
  afterEach(() => relay.close())

  // A request from a second client address: Linux routes all of 127.0.0.0/8 to the loopback
  // interface. (node:http, as undici's connector does not take a local address.)
  function fromElsewhere(method: string, path: string, headers: Record<string, string>, body = ''): Promise<number> {
    const { hostname, port } = new URL(relay.url)
    return new Promise((resolve, reject) => {
      const req = httpRequest({ host: hostname, port, method, path, headers, localAddress: '127.0.0.2' }, (res) => {
        res.resume()
        res.on('end', () => resolve(res.statusCode!))
      })
      req.on('error', reject)
      req.end(body)
    })
  }

  const methodOf = (path: string): string => (path === '/v1/batch' ? 'POST' : 'GET')
  const bodyOf = (path: string): string => (path === '/v1/batch' ? JSON.stringify({ batch: [track()] }) : '')

  async function call(path: string, authorization: string): Promise<{ status: number; retryAfter: unknown }> {
    const response = await request(`${relay.url}${path}`, {
      method: methodOf(path),
      headers: { authorization, 'content-type': 'application/json' },
      ...(path === '/v1/batch' ? { body: bodyOf(path) } : {}),
    })
    await response.body.dump()
    return { status: response.statusCode, retryAfter: response.headers['retry-after'] }
  }

  it.each([
    ['an ingest write key', '/v1/batch', basic('guessed-key'), basic(WRITE_KEY), 200],
    ['the admin token', '/v1/deliveries', 'Bearer guessed-token', `Bearer ${ADMIN_TOKEN}`, 200],
    ['the metrics token', '/metrics', 'Bearer guessed-token', 'Bearer metrics-token-for-tests', 200],
  ])(
    'guessing %s gets 429 with Retry-After, while another address is served',
    async (_name, path, wrong, right, ok) => {
      for (let i = 0; i < MAX_AUTH_FAILURES; i++) expect((await call(path, wrong)).status).toBe(401)
      expect(await call(path, wrong)).toEqual({ status: 429, retryAfter: '60' })
      // Even the right credential: from this address nothing is checked until the window ends.
      expect((await call(path, right)).status).toBe(429)
      const headers = { authorization: right, 'content-type': 'application/json' }
      expect(await fromElsewhere(methodOf(path), path, headers, bodyOf(path))).toBe(ok)
    },
  )

  it('answers a brute-forced sign-in 429 while another address signs in', async () => {
    const guesser = new PageClient(relay.url)
    const statuses = []
    for (let i = 0; i <= MAX_AUTH_FAILURES; i++) statuses.push((await guesser.signIn(`guess-${i}`)).status)
    expect(statuses).toEqual([...Array(MAX_AUTH_FAILURES).fill(401), 429])
    expect((await guesser.signIn()).status).toBe(429)

    const form = new URLSearchParams({ token: ADMIN_TOKEN, next: '/' }).toString()
    const headers = { 'content-type': 'application/x-www-form-urlencoded', origin: relay.url }
    expect(await fromElsewhere('POST', '/ui/sign-in', headers, form)).toBe(303)
  })
})
