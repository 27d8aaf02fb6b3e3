import { describe, expect, it } from 'vitest'
import { MockAgent } from 'undici'
import { WebhookConfigError, WebhookDestination, type WebhookSettings } from '../../src/webhooks/index'

const url = 'https://hooks.example.com/a'

function configError(settings: unknown, options?: unknown): WebhookConfigError {
  try {
    new WebhookDestination(settings as WebhookSettings, options as never)
  } catch (error) {
    if (error instanceof WebhookConfigError) return error
    throw error
  }
  throw new Error('expected a WebhookConfigError')
}

describe('WebhookDestination settings', () => {
  it('accepts 1 to 5 webhooks with headers, a secret, Standard Webhooks and options', () => {
    const five = Array.from({ length: 5 }, (_, index) => ({ url: `${url}${index}`, headers: { 'X-Team': 'growth' } }))
    expect(
      () =>
        new WebhookDestination(
          { webhooks: five, sharedSecret: 's3cret', standardWebhooks: true },
          { timeout: 1000, dispatcher: new MockAgent() },
        ),
    ).not.toThrow()
    expect(() => new WebhookDestination({ webhooks: [{ url: 'http://localhost:8080/hook?token=abc' }] })).not.toThrow()
  })

  it.each<[string, unknown, string, RegExp]>([
    ['no settings', undefined, 'settings', /must be an object, got undefined/],
    ['no webhooks', {}, 'webhooks', /must list 1 to 5 webhooks .*, got undefined/],
    ['an empty list', { webhooks: [] }, 'webhooks', /1 to 5 .*got 0 entries/],
    ['six webhooks', { webhooks: Array.from({ length: 6 }, () => ({ url })) }, 'webhooks', /1 to 5 .*got 6 entries/],
    ['a string entry', { webhooks: [url] }, 'webhooks[0]', /must be an object \{ url, headers\? \}, got "https/],
    ['a missing url', { webhooks: [{}] }, 'webhooks[0].url', /full http: or https: URL.*got undefined/],
    ['a relative url', { webhooks: [{ url: '/hook' }] }, 'webhooks[0].url', /full http: or https: URL.*got "\/hook"/],
    ['an ftp url', { webhooks: [{ url: 'ftp://example.com/x' }] }, 'webhooks[0].url', /got the protocol "ftp:"/],
    [
      'credentials in the url',
      { webhooks: [{ url: 'https://user:pw@example.com' }] },
      'webhooks[0].url',
      /must not contain credentials/,
    ],
    [
      'a misspelt entry key',
      { webhooks: [{ url, header: {} }] },
      'webhooks[0].header',
      /not a known setting; allowed: url, headers/,
    ],
    ['a misspelt setting', { webhooks: [{ url }], sharedsecret: 'x' }, 'sharedsecret', /not a known setting/],
    [
      'headers as an array',
      { webhooks: [{ url, headers: [['X-A', '1']] }] },
      'webhooks[0].headers',
      /must be an object .*got an array/,
    ],
    [
      'a header name with a space',
      { webhooks: [{ url, headers: { 'X Team': 'a' } }] },
      'webhooks[0].headers',
      /"X Team" is not a valid HTTP header name/,
    ],
    [
      'a reserved header',
      { webhooks: [{ url, headers: { 'content-type': 'text/plain' } }] },
      'webhooks[0].headers.content-type',
      /set by the destination/,
    ],
    [
      'X-Signature as a static header',
      { webhooks: [{ url, headers: { 'X-Signature': 'abc' } }] },
      'webhooks[0].headers.X-Signature',
      /set by the destination/,
    ],
    [
      'a header twice',
      { webhooks: [{ url, headers: { 'X-A': '1', 'x-a': '2' } }] },
      'webhooks[0].headers.x-a',
      /given twice/,
    ],
    [
      'a number header value',
      { webhooks: [{ url, headers: { 'X-A': 1 } }] },
      'webhooks[0].headers.X-A',
      /must be a string, got a number/,
    ],
    [
      'a header value with a line break',
      { webhooks: [{ url, headers: { 'X-A': 'a\r\nInjected: 1' } }] },
      'webhooks[0].headers.X-A',
      /no line breaks/,
    ],
    [
      'an empty secret',
      { webhooks: [{ url }], sharedSecret: '' },
      'sharedSecret',
      /non-empty string when set, got an empty string/,
    ],
    [
      'a numeric secret',
      { webhooks: [{ url }], sharedSecret: 12345 },
      'sharedSecret',
      /non-empty string when set, got a number/,
    ],
    [
      'standardWebhooks without a secret',
      { webhooks: [{ url }], standardWebhooks: true },
      'standardWebhooks',
      /sharedSecret is not set/,
    ],
    [
      'standardWebhooks as a string',
      { webhooks: [{ url }], standardWebhooks: 'yes' },
      'standardWebhooks',
      /must be true, false or \{ secrets/,
    ],
    [
      'no standard secrets',
      { webhooks: [{ url }], standardWebhooks: { secrets: [] } },
      'standardWebhooks.secrets',
      /non-empty array.*got an empty array/,
    ],
    [
      'bad whsec_ base64',
      { webhooks: [{ url }], standardWebhooks: { secrets: ['whsec_MfKQ', 'whsec_not base64!'] } },
      'standardWebhooks.secrets[1]',
      /not valid base64/,
    ],
    [
      'an empty standard secret',
      { webhooks: [{ url }], standardWebhooks: { secrets: [''] } },
      'standardWebhooks.secrets[0]',
      /non-empty string/,
    ],
    [
      'a bad whsec_ sharedSecret with true',
      { webhooks: [{ url }], sharedSecret: 'whsec_!', standardWebhooks: true },
      'sharedSecret',
      /not valid base64/,
    ],
  ])('refuses %s', (_case, settings, setting, problem) => {
    const error = configError(settings)
    expect(error.code).toBe('ERR_WEBHOOK_CONFIG')
    expect(error.setting).toBe(setting)
    expect(error.message).toContain(`Invalid webhook setting ${setting}:`)
    expect(error.message).toMatch(problem)
  })

  it.each([0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, '5000'])('refuses the timeout %s', (timeout) => {
    const error = configError({ webhooks: [{ url }] }, { timeout })
    expect(error.setting).toBe('options.timeout')
    expect(error.message).toMatch(/whole number of milliseconds/)
  })

  it('refuses options that are not an object, or have unknown keys', () => {
    expect(configError({ webhooks: [{ url }] }, 5000).message).toMatch(
      /options: must be an object \{ timeout\?, dispatcher\?, responseBodyLimit\? \}, got number 5000/,
    )
    expect(configError({ webhooks: [{ url }] }, { timeoutMs: 5000 }).setting).toBe('options.timeoutMs')
  })

  it('refuses a dispatcher that is not one', () => {
    expect(configError({ webhooks: [{ url }] }, { dispatcher: {} }).message).toMatch(
      /options.dispatcher: must be an undici Dispatcher/,
    )
  })

  it('never echoes a secret or a header value in the error', () => {
    const secret = 'whsec_%%%super-secret%%%'
    expect(configError({ webhooks: [{ url }], standardWebhooks: { secrets: [secret] } }).message).not.toContain(
      'super-secret',
    )
    const header = configError({ webhooks: [{ url, headers: { Authorization: 'Bearer tok3n\n' } }] })
    expect(header.message).not.toContain('tok3n')
  })

  it('does not change the caller’s objects', () => {
    const settings = { webhooks: [{ url, headers: { 'X-Team': 'growth' } }], sharedSecret: 's3cret' }
    const snapshot = structuredClone(settings)
    new WebhookDestination(settings)
    expect(settings).toEqual(snapshot)
    expect(Object.isFrozen(settings.webhooks[0]!.headers)).toBe(false)
  })
})
