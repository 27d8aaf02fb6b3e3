import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { localPath } from '../../../src/relay/console/page/local-path'
import { MAX_AUTH_FAILURES } from '../../../src/relay/http/auth-limiter'
import type { Relay } from '../../../src/relay/index'
import { type Receiver, startReceiver, startRelay } from '../helpers'
import { PageClient } from './page-client'

// Forms of `next` a browser, after the URL parser, could read as another site (`//x`, `/\x`) or
// that resolve to one: dot segments, encoded slashes, backslashes and dots, tabs and newlines.
const HOSTILE = [
  '//evil.example',
  '/.//evil.example',
  '/./%2e/evil.example',
  '/%2F/evil.example',
  '/%2f%2fevil.example',
  '/\\evil.example',
  '/%5Cevil.example',
  '/%5cevil.example',
  '/%2e%2e//evil.example',
  '/..//evil.example',
  '/a/..//evil.example',
  '/a/../..//evil.example',
  '/%2E%2E/%2E%2E//evil.example',
  '/\t/evil.example',
  '/\n/evil.example',
  '/\r\n/evil.example',
  '/ /evil.example',
  '\\\\evil.example',
  'https://evil.example/',
  'javascript:alert(1)',
  '/\u0000/evil.example',
  '///evil.example',
  '/.\\evil.example',
  '',
  'evil.example',
  '/ui/sign-in',
  '/ui/sign-out',
]

// Where a browser goes for a Location header: it resolves the value against the page's URL.
function followed(location: string, base: string): URL {
  return new URL(location, base)
}

describe('where sign-in returns to (next)', () => {
  it.each(HOSTILE.map((next) => [JSON.stringify(next), next]))('never leaves the relay for next=%s', (_, next) => {
    const location = localPath(next)
    expect(location).toMatch(/^\/(?![/\\])/)
    expect(followed(location, 'https://relay.example/').origin).toBe('https://relay.example')
  })

  it('keeps a path of this relay, with its query, percent-encoded', () => {
    expect(localPath('/ui/deliveries/12')).toBe('/ui/deliveries/12')
    expect(localPath('/?url=https%3A%2F%2Fa.example%2Fhook&status=failed')).toBe(
      '/?url=https%3A%2F%2Fa.example%2Fhook&status=failed',
    )
    expect(localPath('/€')).toBe('/%E2%82%AC')
    expect(localPath('/ui/endpoints')).toBe('/ui/endpoints')
  })
})

describe('the sign-in form over HTTP', () => {
  let receiver: Receiver
  let relay: Relay
  beforeAll(async () => {
    receiver = await startReceiver()
    relay = await startRelay(receiver.url)
  })
  afterAll(async () => {
    await relay.close()
    await receiver.close()
  })

  it.each(['/.//evil.example', '/%2e%2e//evil.example', '/\t/evil.example', '/%5Cevil.example'])(
    'answers next=%j with a Location on the relay',
    async (next) => {
      const client = new PageClient(relay.url)
      const signedIn = await client.post('/ui/sign-in', { token: 'admin-token-for-tests', next })
      expect(signedIn.status).toBe(303)
      expect(followed(signedIn.headers['location'] as string, relay.url).origin).toBe(new URL(relay.url).origin)
    },
  )

  it('answers a client over its failed sign-ins with 429 and Retry-After, like the admin API', async () => {
    const client = new PageClient(relay.url)
    for (let i = 0; i < MAX_AUTH_FAILURES; i++) expect((await client.signIn('not-the-token')).status).toBe(401)
    const limited = await client.signIn('not-the-token')
    expect(limited.status).toBe(429)
    expect(limited.headers['content-type']).toBe('text/html; charset=utf-8')
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0)
  })
})
