import { afterEach, describe, expect, it } from 'vitest'
import { admin, adminGet, post, track, waitFor } from '../helpers'
import { relayBehindProxy } from '../fixtures/relay'
import { PageClient } from '../console/page-client'

// A real outage: the relay reaches PostgreSQL through a TCP proxy the test cuts (every connection
// drops, new ones are refused) and restores.

const cleanups: (() => Promise<unknown> | unknown)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

describe('the admin API and the operator page while PostgreSQL is unreachable', () => {
  it('answers every admin endpoint 503 ERR_STORE_UNAVAILABLE with one log line each, and recovers by itself', async () => {
    const { relay, proxy, logged } = await relayBehindProxy(cleanups)
    expect((await post(`${relay.url}/v1/batch`, { batch: [track({ messageId: 'before' })] })).status).toBe(200)
    expect((await adminGet(`${relay.url}/v1/deliveries`)).status).toBe(200)

    await proxy.cut()
    const calls: [string, string, unknown?][] = [
      ['GET', '/v1/deliveries'],
      ['POST', '/v1/deliveries/1/retry'],
      ['POST', '/v1/deletions', { userId: 'u1' }],
      ['PUT', '/v1/audiences/vips', { source: 'web', userIds: ['u1'] }],
    ]
    for (const [method, path, body] of calls) {
      const response = await fetch(`${relay.url}${path}`, {
        method,
        headers: { ...admin, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      })
      expect(response.status, `${method} ${path}`).toBe(503)
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe('ERR_STORE_UNAVAILABLE')
      const lines = logged.filter((e) => e.msg.startsWith(`${method} ${path} `))
      expect(lines, `${method} ${path}`).toHaveLength(1)
      expect(lines[0]!.level).toBe('warn')
      expect(lines[0]!.msg).toMatch(/→ 503 ERR_STORE_UNAVAILABLE: \S/)
      expect(lines[0]!.msg).not.toMatch(/\n|\s+at /) // no stack
    }
    expect(logged.filter((e) => e.msg.includes('ERR_INTERNAL') || e.fields.event === 'internal-error')).toEqual([])

    await proxy.restore()
    const back = await waitFor(async () => {
      const answer = await adminGet(`${relay.url}/v1/deliveries`)
      return answer.status === 200 ? answer : undefined
    }, 'the admin API to recover')
    expect(back.body.deliveries.map((d: { messageId: string }) => d.messageId)).toContain('before')
  })

  it('shows a readable 503 page (red badge with the reason, what still works, when last healthy), then the overview again', async () => {
    const { relay, proxy } = await relayBehindProxy(cleanups)
    const page = new PageClient(relay.url)
    await page.signIn()
    expect((await page.get('/')).status).toBe(200)

    await proxy.cut()
    const down = await page.get('/')
    expect(down.status).toBe(503)
    expect(down.headers['content-type']).toMatch(/^text\/html/)
    expect(down.headers['content-security-policy']).toContain("default-src 'none'")
    expect(down.body).toMatch(/<span class="health bad"[^>]*>store unavailable: [^<]+<\/span>/)
    expect(down.body).toContain('The store is unavailable')
    expect(down.body).toContain('What still works')
    expect(down.body).toMatch(/Last healthy<\/dt><dd><time datetime="[^"]+"[^>]*>\d+ s ago<\/time>/)
    expect(down.body).toContain('<meta http-equiv="refresh" content="10">')
    expect(down.body).not.toContain('ERR_INTERNAL')
    expect((await page.get('/ui/deliveries/1')).status).toBe(503)

    await proxy.restore()
    const back = await waitFor(async () => {
      const answer = await page.get('/')
      return answer.status === 200 ? answer : undefined
    }, 'the page to recover')
    expect(back.body).toContain('Recent deliveries')
  })
})
