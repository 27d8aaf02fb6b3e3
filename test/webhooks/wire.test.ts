import { once } from 'node:events'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { Agent, buildConnector } from 'undici'
import { sign, WebhookDestination, WebhookMessageError, type DeliverableMessage } from '../../src/webhooks/index'
import { answer, hang, startReceiver, type TestReceiver } from './receiver'

const message: DeliverableMessage = {
  type: 'track',
  messageId: 'msg-1',
  userId: 'u-1',
  event: 'Order Completed',
  properties: { revenue: '39.95', note: 'crème brûlée ☕ 🎉' },
  timestamp: '2026-01-02T03:04:05.678Z',
}

const open: { close(): Promise<void> }[] = []
async function receiver(...args: Parameters<typeof startReceiver>): Promise<TestReceiver> {
  const started = await startReceiver(...args)
  open.push(started)
  return started
}
afterEach(async () => {
  await Promise.all(open.splice(0).map((item) => item.close()))
})

describe('send: the request on the wire', () => {
  it('POSTs the formatted body with exactly the documented headers and the signature of those bytes', async () => {
    const hook = await receiver(answer(200))
    const webhooks = new WebhookDestination({
      webhooks: [{ url: hook.url, headers: { 'X-Team': 'growth' } }],
      sharedSecret: 's3cret',
    })

    const result = await webhooks.send(message)

    expect(result.ok).toBe(true)
    expect(result.attempts).toEqual([{ url: hook.url, status: 200, ms: expect.any(Number) }])
    const [received] = hook.requests
    expect(received?.method).toBe('POST')
    expect(received?.url).toBe('/hook')
    const body = received!.body
    expect(JSON.parse(body.toString('utf8'))).toMatchObject({
      version: 1,
      type: 'track',
      event: 'Order Completed',
      messageId: 'msg-1',
    })
    expect(received?.headers['x-signature']).toBe(sign(body, 's3cret'))
    expect(received?.headers).toMatchObject({
      'user-agent': 'Tracklet/1.0',
      'content-type': 'application/json',
      'x-team': 'growth',
      'content-length': String(body.length),
    })
    const sent = Object.keys(received!.headers).sort()
    expect(sent).toEqual([
      'connection',
      'content-length',
      'content-type',
      'host',
      'user-agent',
      'x-signature',
      'x-team',
    ])
  })

  it('keeps the query string of a URL in the request target', async () => {
    const hook = await receiver(answer(204))
    const result = await new WebhookDestination({ webhooks: [{ url: `${hook.url}?team=growth&x=%20y` }] }).send(message)
    expect(result.ok).toBe(true)
    expect(hook.requests[0]?.url).toBe('/hook?team=growth&x=%20y')
  })

  it('sends no X-Signature without a shared secret', async () => {
    const hook = await receiver(answer(204))
    await new WebhookDestination({ webhooks: [{ url: hook.url }] }).send(message)
    expect(hook.requests[0]?.headers).not.toHaveProperty('x-signature')
  })

  it('sends the same bytes to every URL, concurrently, each with its own static headers', async () => {
    // Neither receiver answers until both have the request: a sequential sender would stall here.
    const arrived: (() => void)[] = []
    const together = (_req: unknown, res: import('node:http').ServerResponse): void => {
      arrived.push(() => res.writeHead(200).end())
      if (arrived.length === 2) {
        for (const release of arrived) release()
      }
    }
    const first = await receiver(together)
    const second = await receiver(together)
    const webhooks = new WebhookDestination(
      {
        webhooks: [
          { url: first.url, headers: { 'X-Hook': 'a' } },
          { url: second.url, headers: { 'X-Hook': 'b' } },
        ],
        sharedSecret: 's3cret',
      },
      { timeout: 10_000 },
    )

    const result = await webhooks.send(message)

    expect(result.ok).toBe(true)
    expect(result.attempts.map((attempt) => attempt.status)).toEqual([200, 200])
    expect(first.requests[0]?.body.equals(second.requests[0]!.body)).toBe(true)
    expect(first.requests[0]?.headers['x-hook']).toBe('a')
    expect(second.requests[0]?.headers['x-hook']).toBe('b')
  })
})

describe('send: what it is given', () => {
  it('rejects a message that cannot be formatted, sending nothing', async () => {
    const hook = await receiver(answer(200))
    const webhooks = new WebhookDestination({ webhooks: [{ url: hook.url }] })
    const broken = {
      type: 'track',
      messageId: 'm',
      userId: 'u',
      timestamp: '2026-01-02T03:04:05Z',
    } as DeliverableMessage
    await expect(webhooks.send(broken)).rejects.toThrow(WebhookMessageError)
    await expect(webhooks.send(broken)).rejects.toThrow(/track needs event/)
    expect(hook.requests).toHaveLength(0)
  })

  it('keeps its own copy of the settings: changing the caller’s object later changes nothing', async () => {
    const hook = await receiver(answer(200))
    const settings = { webhooks: [{ url: hook.url, headers: { 'X-Team': 'growth' } }], sharedSecret: 's3cret' }
    const webhooks = new WebhookDestination(settings)
    settings.webhooks[0]!.headers['X-Team'] = 'changed'
    settings.sharedSecret = 'changed'
    await webhooks.send(message)
    const [received] = hook.requests
    expect(received?.headers['x-team']).toBe('growth')
    expect(received?.headers['x-signature']).toBe(sign(received!.body, 's3cret'))
  })
})

describe('send: outcomes', () => {
  it('one 2xx among failures is ok (processed, not to be retried)', async () => {
    const failing = await receiver(answer(500))
    const working = await receiver(answer(202))
    const result = await new WebhookDestination({ webhooks: [{ url: failing.url }, { url: working.url }] }).send(
      message,
    )
    expect(result).toMatchObject({ ok: true, retryable: false })
    expect(result.attempts.map((attempt) => attempt.status)).toEqual([500, 202])
  })

  it.each([500, 503, 429])('%i is retryable', async (status) => {
    const hook = await receiver(answer(status))
    const result = await new WebhookDestination({ webhooks: [{ url: hook.url }] }).send(message)
    expect(result).toMatchObject({ ok: false, retryable: true, attempts: [{ url: hook.url, status }] })
  })

  it.each([400, 401, 404, 410])('%i is not retryable', async (status) => {
    const hook = await receiver(answer(status))
    const result = await new WebhookDestination({ webhooks: [{ url: hook.url }] }).send(message)
    expect(result).toMatchObject({ ok: false, retryable: false, attempts: [{ status }] })
  })

  it('a 4xx beside a 5xx is retryable (the 5xx may recover)', async () => {
    const gone = await receiver(answer(404))
    const down = await receiver(answer(502))
    const result = await new WebhookDestination({ webhooks: [{ url: gone.url }, { url: down.url }] }).send(message)
    expect(result).toMatchObject({ ok: false, retryable: true })
  })

  it('does not follow a redirect, and a redirect is not retryable', async () => {
    const target = await receiver(answer(200))
    const redirecting = await receiver(answer(301, { Location: target.url }))
    const result = await new WebhookDestination({ webhooks: [{ url: redirecting.url }] }).send(message)
    expect(result).toMatchObject({ ok: false, retryable: false, attempts: [{ status: 301 }] })
    expect(target.requests).toHaveLength(0)
  })

  it('parses Retry-After in seconds', async () => {
    const hook = await receiver(answer(429, { 'Retry-After': '120' }))
    const result = await new WebhookDestination({ webhooks: [{ url: hook.url }] }).send(message)
    expect(result).toMatchObject({ ok: false, retryable: true, retryAfterMs: 120_000 })
  })

  it('parses Retry-After as an HTTP date, and keeps the longest of several', async () => {
    const inAnHour = new Date(Date.now() + 3_600_000).toUTCString()
    const soon = await receiver(answer(503, { 'Retry-After': '5' }))
    const later = await receiver(answer(503, { 'Retry-After': inAnHour }))
    const result = await new WebhookDestination({ webhooks: [{ url: soon.url }, { url: later.url }] }).send(message)
    // An HTTP date has whole seconds: the wait is within the hour, and well past the 5 s.
    expect(result.retryAfterMs).toBeGreaterThan(3_500_000)
    expect(result.retryAfterMs).toBeLessThanOrEqual(3_600_000)
  })

  it('a refused connection is a retryable network error naming ECONNREFUSED', async () => {
    const hook = await receiver(answer(200))
    await hook.close()
    open.pop()
    const result = await new WebhookDestination({ webhooks: [{ url: hook.url }] }).send(message)
    expect(result).toMatchObject({ ok: false, retryable: true, attempts: [{ url: hook.url, code: 'ECONNREFUSED' }] })
    expect(result.attempts[0]?.error).toMatch(/ECONNREFUSED/)
    expect(result.attempts[0]).not.toHaveProperty('status')
  })

  it('passes through the reason a custom dispatcher refuses to connect', async () => {
    const hook = await receiver(answer(200))
    const guard = new Agent({
      connect: (_options, callback) => {
        callback(
          Object.assign(new Error('refusing to connect to 127.0.0.1: a private address'), { code: 'ERR_SSRF_BLOCKED' }),
          null,
        )
      },
    })
    try {
      const result = await new WebhookDestination({ webhooks: [{ url: hook.url }] }, { dispatcher: guard }).send(
        message,
      )
      expect(result.ok).toBe(false)
      expect(result.attempts[0]).toMatchObject({ code: 'ERR_SSRF_BLOCKED' })
      expect(result.attempts[0]?.error).toContain('refusing to connect to 127.0.0.1: a private address')
      expect(hook.requests).toHaveLength(0)
    } finally {
      await guard.close()
    }
  })
})

describe('send: timeouts', () => {
  it('a receiver that never answers times out, is retryable, and its socket is released', async () => {
    const hook = await receiver(hang)
    const webhooks = new WebhookDestination({ webhooks: [{ url: hook.url }] }, { timeout: 200 })

    const result = await webhooks.send(message)

    expect(result).toMatchObject({
      ok: false,
      retryable: true,
      attempts: [{ url: hook.url, code: 'ERR_WEBHOOK_TIMEOUT' }],
    })
    expect(result.attempts[0]?.error).toContain('timed out after 200 ms')
    expect(hook.requests).toHaveLength(1)
    // The aborted request's socket is destroyed, not left open to the silent receiver.
    await vi.waitFor(async () => expect(await hook.connections()).toBe(0))
  })

  it('times out a request still connecting (a receiver whose connect hangs), and never sends it later', async () => {
    const hook = await receiver(answer(200))
    // A connector that holds every connection in the making until the test lets it through.
    const held: Array<() => void> = []
    const stalling = new Agent({
      connect: (options, callback) => {
        held.push(() => buildConnector({})(options, callback))
      },
    })
    try {
      const webhooks = new WebhookDestination({ webhooks: [{ url: hook.url }] }, { timeout: 200, dispatcher: stalling })
      const result = await webhooks.send(message)
      expect(result).toMatchObject({ ok: false, retryable: true, attempts: [{ code: 'ERR_WEBHOOK_TIMEOUT' }] })
      expect(result.attempts[0]?.error).toContain('timed out after 200 ms')
      // The connection comes up after all: the timed-out request is aborted on it, unwritten.
      const closed = once(stalling, 'disconnect')
      for (const connect of held.splice(0)) connect()
      await closed
      expect(hook.requests).toHaveLength(0)
    } finally {
      await stalling.close()
    }
  })

  it('waits 5 s by default before timing out', async () => {
    const hook = await receiver(hang)
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
    try {
      let settled = false
      const sending = new WebhookDestination({ webhooks: [{ url: hook.url }] }).send(message).finally(() => {
        settled = true
      })
      // Not vi.waitFor: under fake timers it advances the clock itself.
      while (hook.requests.length === 0) await new Promise((resolve) => setImmediate(resolve))
      await vi.advanceTimersByTimeAsync(4_999)
      expect(settled).toBe(false)
      await vi.advanceTimersByTimeAsync(1)
      const result = await sending
      expect(result.attempts[0]?.error).toContain('timed out after 5000 ms')
    } finally {
      vi.useRealTimers()
    }
  })
})
