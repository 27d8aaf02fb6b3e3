import { describe, expect, it } from 'vitest'
import { MockAgent } from 'undici'
import { Analytics } from '../../src/index'
import { DEFAULT_OPTIONS, resolveOptions } from '../../src/sdk/options'

describe('options', () => {
  it('resolves the documented defaults', () => {
    expect(resolveOptions('key', undefined)).toEqual({
      endpoint: 'https://api.segment.io',
      flushAt: 20,
      flushInterval: 5000,
      maxQueueSize: 100_000,
      timeout: 10_000,
      maxRetries: 6,
      integrations: undefined,
      dispatcher: undefined,
      gzip: false,
    })
    expect(Object.isFrozen(DEFAULT_OPTIONS)).toBe(true)
  })

  it('accepts the Go names size and flushAfter as aliases', () => {
    const resolved = resolveOptions('key', { size: 1, flushAfter: 250 })
    expect(resolved.flushAt).toBe(1)
    expect(resolved.flushInterval).toBe(250)
  })

  it('refuses an alias that contradicts its option', () => {
    expect(() => resolveOptions('key', { flushAt: 5, size: 10 })).toThrow(
      new TypeError('flushAt and size are the same option: give one, got number 5 and number 10'),
    )
    expect(resolveOptions('key', { flushAt: 5, size: 5 }).flushAt).toBe(5)
  })

  it.each([
    [{ flushAt: 0 }, 'flushAt must be an integer of at least 1, got number 0'],
    [{ flushAt: -1 }, 'flushAt must be an integer of at least 1, got number -1'],
    [{ size: 1.5 }, 'flushAt must be an integer of at least 1, got number 1.5'],
    [{ flushInterval: 0 }, 'flushInterval must be a positive number of milliseconds, at most 2147483647, got number 0'],
    [
      { flushAfter: Number.POSITIVE_INFINITY },
      'flushInterval must be a positive number of milliseconds, at most 2147483647, got number Infinity',
    ],
    [{ maxQueueSize: 0 }, 'maxQueueSize must be an integer of at least 1, got number 0'],
    [{ timeout: -5 }, 'timeout must be a positive number of milliseconds, at most 2147483647, got number -5'],
    // Node would turn a longer timer into 1 ms: a generous limit would fire at once.
    [
      { timeout: 2 ** 31 },
      'timeout must be a positive number of milliseconds, at most 2147483647, got number 2147483648',
    ],
    [
      { flushInterval: 2 ** 31 },
      'flushInterval must be a positive number of milliseconds, at most 2147483647, got number 2147483648',
    ],
    [{ maxRetries: -1 }, 'maxRetries must be an integer of at least 0, got number -1'],
    [{ endpoint: 'not a url' }, 'endpoint must be an http(s) URL, got "not a url"'],
    [{ endpoint: 'ftp://example.com' }, 'endpoint must be an http(s) URL, got "ftp://example.com"'],
    [
      { integrations: { Webhooks: 'yes' } },
      'integrations.Webhooks must be true, false or an object of options, got "yes"',
    ],
    [{ integrations: [] }, 'integrations must be an object, got an array'],
    [{ gzip: 'yes' }, 'gzip must be true or false, got "yes"'],
    [{ gzip: 1 }, 'gzip must be true or false, got number 1'],
    [{ dispatcher: {} }, 'dispatcher must be an undici Dispatcher (an Agent, ProxyAgent or MockAgent), got an object'],
  ])('throws a TypeError naming the option and value for %o', (options, message) => {
    expect(() => new Analytics('key', options as never)).toThrow(new TypeError(message))
  })

  it('refuses an empty write key without echoing a key', () => {
    expect(() => new Analytics('')).toThrow(new TypeError('writeKey must be a non-empty string, got an empty string'))
    expect(() => new Analytics(undefined as never)).toThrow(
      new TypeError('writeKey must be a non-empty string, got undefined'),
    )
  })

  it('does not mutate the options it was given', () => {
    const options = { flushAt: 3, integrations: { All: false } }
    const copy = structuredClone(options)
    void new Analytics('key', options).closeAndFlush()
    expect(options).toEqual(copy)
  })

  it('keeps an endpoint path prefix and drops its trailing slash', () => {
    expect(resolveOptions('key', { endpoint: 'http://localhost:1/api/' }).endpoint).toBe('http://localhost:1/api')
  })

  it('accepts an undici dispatcher', () => {
    const agent = new MockAgent()
    expect(resolveOptions('key', { dispatcher: agent }).dispatcher).toBe(agent)
  })

  it('lets analytics.size and analytics.flushAt be set after construction, validated', async () => {
    const analytics = new Analytics('key', { endpoint: 'http://127.0.0.1:9' })
    expect(analytics.size).toBe(20)
    analytics.size = 1
    expect(analytics.flushAt).toBe(1)
    expect(() => {
      analytics.size = 0
    }).toThrow(new TypeError('size must be an integer of at least 1, got number 0'))
    expect(analytics.flushAt).toBe(1)
    await analytics.closeAndFlush({ timeout: 10 })
  })
})
