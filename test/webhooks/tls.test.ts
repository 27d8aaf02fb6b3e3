import { readFileSync } from 'node:fs'
import { afterEach, describe, expect, it } from 'vitest'
import { Agent } from 'undici'
import { WebhookDestination, type DeliverableMessage } from '../../src/webhooks/index'
import { answer, startReceiver, type TestReceiver } from './receiver'

// A test-only self-signed pair for localhost/127.0.0.1, valid until 2126. Trusted nowhere.
const fixture = (name: string): string => readFileSync(new URL(`../fixtures/${name}`, import.meta.url), 'utf8')
const tls = { key: fixture('self-signed-key.pem'), cert: fixture('self-signed-cert.pem') }

const message: DeliverableMessage = { type: 'delete', userId: 'u-1', timestamp: '2026-01-02T03:04:05.678Z' }

let hook: TestReceiver | undefined
afterEach(async () => {
  await hook?.close()
  hook = undefined
})

describe('send over HTTPS', () => {
  it('refuses a self-signed certificate: the error names the problem and no request is sent', async () => {
    hook = await startReceiver(answer(200), tls)

    const result = await new WebhookDestination({ webhooks: [{ url: hook.url }], sharedSecret: 's3cret' }).send(message)

    expect(result).toMatchObject({ ok: false, retryable: true })
    expect(result.attempts[0]?.code).toMatch(/^(DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN)$/)
    expect(result.attempts[0]?.error).toMatch(/self[- ]signed certificate/)
    expect(hook.requests).toHaveLength(0)
  })

  it('delivers when the certificate is trusted through a custom dispatcher (TLS still verified)', async () => {
    hook = await startReceiver(answer(200), tls)
    const trusting = new Agent({ connect: { ca: tls.cert } })
    try {
      const result = await new WebhookDestination({ webhooks: [{ url: hook.url }] }, { dispatcher: trusting }).send(
        message,
      )
      expect(result).toMatchObject({ ok: true, attempts: [{ status: 200 }] })
      expect(hook.requests).toHaveLength(1)
    } finally {
      await trusting.close()
    }
  })
})
