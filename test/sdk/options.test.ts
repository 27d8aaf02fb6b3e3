import { describe, expect, it } from 'vitest'
import { MockAgent } from 'undici'
import { Analytics } from '../../src/index'
import { DEFAULT_OPTIONS, OPTION_ALIASES, resolveOptions, splitArguments } from '../../src/sdk/options'

describe('options', () => {
  it('resolves the documented defaults', () => {
    expect(resolveOptions('key', undefined)).toEqual({
      endpoint: 'https://api.segment.io',
      path: '/v1/batch',
      flushAt: 20,
      flushInterval: 5000,
      maxQueueSize: 100_000,
      timeout: 10_000,
      maxRetries: 6,
      integrations: undefined,
      dispatcher: undefined,
      gzip: false,
      disable: false,
    })
    expect(Object.isFrozen(DEFAULT_OPTIONS)).toBe(true)
  })

  it('accepts the Go names size and flushAfter as aliases', () => {
    const resolved = resolveOptions('key', { size: 1, flushAfter: 250 })
    expect(resolved.flushAt).toBe(1)
    expect(resolved.flushInterval).toBe(250)
  })

  it('refuses two names for one option in one call, even with equal values', () => {
    expect(() => resolveOptions('key', { flushAt: 5, size: 10 })).toThrow(
      new TypeError('flushAt and size are the same option: give one, got number 5 and number 10'),
    )
    expect(() => resolveOptions('key', { flushAt: 5, size: 5 })).toThrow(
      new TypeError('flushAt and size are the same option: give one, got number 5 and number 5'),
    )
    expect(() => resolveOptions('key', { endpoint: 'http://a', host: 'http://b' })).toThrow(
      new TypeError('endpoint and host are the same option: give one, got "http://a" and "http://b"'),
    )
    expect(() => resolveOptions('key', { size: 1, maxEventsInBatch: 1 })).toThrow(
      new TypeError('size and maxEventsInBatch are the same option: give one, got number 1 and number 1'),
    )
    expect(() => resolveOptions('key', { flushAfter: 10, interval: 10 })).toThrow(/flushAfter and interval/)
    expect(() => resolveOptions('key', { timeout: 10, httpRequestTimeout: 10 })).toThrow(
      /timeout and httpRequestTimeout/,
    )
  })

  it("takes Segment's option names as aliases, from the one table", () => {
    const resolved = resolveOptions('key', {
      host: 'http://127.0.0.1:8787/',
      path: 'api/batch',
      maxEventsInBatch: 3,
      httpRequestTimeout: 1234,
      interval: 250,
      disable: true,
    })
    expect(resolved).toMatchObject({
      endpoint: 'http://127.0.0.1:8787',
      path: '/api/batch',
      flushAt: 3,
      timeout: 1234,
      flushInterval: 250,
      disable: true,
    })
    expect(OPTION_ALIASES).toEqual({
      endpoint: ['host'],
      flushAt: ['size', 'maxEventsInBatch'],
      flushInterval: ['flushAfter', 'interval'],
      timeout: ['httpRequestTimeout'],
    })
  })

  it.each([
    ['hots', 'unknown option `hots` (did you mean `host`?)'],
    ['flsuhAt', 'unknown option `flsuhAt` (did you mean `flushAt`?)'],
    ['flushat', 'unknown option `flushat` (did you mean `flushAt`?)'],
    ['endpiont', 'unknown option `endpiont` (did you mean `endpoint`?)'],
    ['enable', 'unknown option `enable` (use `disable` (inverted: `enable: false` is `disable: true`))'],
    ['retryCount', 'unknown option `retryCount` (use `maxRetries`)'],
    ['errorHandler', "unknown option `errorHandler` (use an `'error'` listener or a call's callback)"],
    ['writeKeyy', 'unknown option `writeKeyy`'],
  ])('refuses the unknown option %s, naming the nearest known one', (name, message) => {
    expect(() => new Analytics('key', { [name]: 'http://127.0.0.1:8787' } as never)).toThrow(new TypeError(message))
  })

  it("accepts flushAt: 0 as 1, as both of Segment's Node libraries do", () => {
    expect(resolveOptions('key', { flushAt: 0 }).flushAt).toBe(1)
    expect(resolveOptions('key', { maxEventsInBatch: 0 }).flushAt).toBe(1)
    const analytics = new Analytics('key', { disable: true })
    analytics.flushAt = 0
    expect(analytics.flushAt).toBe(1)
  })

  it("takes Segment's form, new Analytics({ writeKey, ...options })", () => {
    expect(splitArguments({ writeKey: 'k', flushAt: 3 }, undefined)).toEqual({ writeKey: 'k', options: { flushAt: 3 } })
    expect(() => new Analytics({ writeKey: '', host: 'http://127.0.0.1:1' })).toThrow(
      new TypeError('writeKey must be a non-empty string, got an empty string'),
    )
    expect(() => new Analytics({ host: 'http://127.0.0.1:1' } as never)).toThrow(
      new TypeError('writeKey is missing: new Analytics({ writeKey, ...options }) or new Analytics(writeKey, options)'),
    )
    expect(() => Reflect.construct(Analytics, [{ writeKey: 'k' }, {}])).toThrow(/takes one argument/)
    expect(() => new Analytics('k', { writeKey: 'k' } as never)).toThrow(/writeKey is given twice/)
    expect(() => new Analytics({ writeKey: 'k', hots: 'x' } as never)).toThrow(
      new TypeError('unknown option `hots` (did you mean `host`?)'),
    )
  })

  it.each([
    [{ flushAt: -1 }, 'flushAt must be an integer of at least 1, got number -1'],
    [{ size: 1.5 }, 'size must be an integer of at least 1, got number 1.5'],
    [{ maxEventsInBatch: -2 }, 'maxEventsInBatch must be an integer of at least 1, got number -2'],
    [
      { httpRequestTimeout: 0 },
      'httpRequestTimeout must be a positive number of milliseconds, at most 2147483647, got number 0',
    ],
    [{ interval: -1 }, 'interval must be a positive number of milliseconds, at most 2147483647, got number -1'],
    [{ host: 'api.segment.io' }, 'host must be an http(s) URL, got "api.segment.io"'],
    [{ path: '/v1/batch?x' }, 'path must be a URL path such as "/v1/batch", got "/v1/batch?x"'],
    [{ path: 5 }, 'path must be a URL path such as "/v1/batch", got number 5'],
    [{ disable: 'yes' }, 'disable must be true or false, got "yes"'],
    [{ flushInterval: 0 }, 'flushInterval must be a positive number of milliseconds, at most 2147483647, got number 0'],
    [
      { flushAfter: Number.POSITIVE_INFINITY },
      'flushAfter must be a positive number of milliseconds, at most 2147483647, got number Infinity',
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
      analytics.size = -1
    }).toThrow(new TypeError('size must be an integer of at least 1, got number -1'))
    expect(analytics.flushAt).toBe(1)
    await analytics.closeAndFlush({ timeout: 10 })
  })
})
