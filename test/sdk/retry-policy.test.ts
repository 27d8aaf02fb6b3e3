import { describe, expect, it } from 'vitest'
import {
  type AttemptContext,
  type AttemptOutcome,
  backoff,
  decideRetry,
  DEFAULT_RETRY_POLICY,
  parseRetryAfter,
  type RetryPolicy,
} from '../../src/sdk/retry-policy'

const policy: RetryPolicy = { ...DEFAULT_RETRY_POLICY, maxRetries: 3 }
const first: AttemptContext = { attempts: 1, elapsed: 0, batchSize: 10, now: Date.UTC(2026, 0, 1), random: 0.5 }
const status = (code: number, retryAfter?: string): AttemptOutcome => ({ kind: 'response', status: code, retryAfter })

describe('decideRetry', () => {
  it.each([200, 201, 204, 299])('delivers on %i', (code) => {
    expect(decideRetry(status(code), first, policy)).toEqual({ action: 'delivered' })
  })

  it.each([408, 429, 500, 502, 503, 504, 599])('retries %i', (code) => {
    expect(decideRetry(status(code), first, policy)).toMatchObject({ action: 'retry', reason: `HTTP ${code}` })
  })

  it.each([400, 401, 403, 404, 409, 422, 301, 304, 100])('does not retry %i', (code) => {
    expect(decideRetry(status(code), first, policy)).toEqual({ action: 'fail', reason: `HTTP ${code}` })
  })

  it('retries network errors and timeouts', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' })
    expect(decideRetry({ kind: 'network-error', error: refused }, first, policy)).toMatchObject({
      action: 'retry',
      reason: 'network error: ECONNREFUSED connect ECONNREFUSED',
    })
    expect(decideRetry({ kind: 'timeout' }, first, policy)).toMatchObject({
      action: 'retry',
      reason: 'request timed out',
    })
  })

  it('splits a batch on 413, and fails a single message', () => {
    expect(decideRetry(status(413), first, policy)).toEqual({ action: 'split' })
    expect(decideRetry(status(413), { ...first, batchSize: 1 }, policy)).toEqual({
      action: 'fail',
      reason: 'HTTP 413: the server refused the message as too large',
    })
  })

  it('retries exactly maxRetries times', () => {
    expect(decideRetry(status(503), { ...first, attempts: 3 }, policy).action).toBe('retry')
    expect(decideRetry(status(503), { ...first, attempts: 4 }, policy)).toEqual({
      action: 'fail',
      reason: 'HTTP 503; gave up after 4 attempts',
    })
    expect(decideRetry(status(503), first, { ...policy, maxRetries: 0 }).action).toBe('fail')
  })

  it('stops once the next retry would start past maxElapsed', () => {
    const delay = backoff(1, 0.5, policy)
    const atEdge = { ...first, elapsed: policy.maxElapsed - delay }
    expect(decideRetry(status(500), atEdge, policy)).toMatchObject({ action: 'retry', delay })
    expect(decideRetry(status(500), { ...atEdge, elapsed: atEdge.elapsed + 1 }, policy)).toMatchObject({
      action: 'fail',
      reason: expect.stringMatching(/^HTTP 500; gave up after 1 attempts over \d+ ms$/) as unknown,
    })
  })

  it('honours Retry-After in seconds and as an HTTP date, clamped to maxRetryAfter', () => {
    // `retryAfter`: the API's wait, which holds every batch of the client (see PauseGate).
    expect(decideRetry(status(429, '7'), first, policy)).toMatchObject({
      action: 'retry',
      delay: 7000,
      retryAfter: true,
    })
    expect(decideRetry(status(503, '0'), first, policy)).toMatchObject({ action: 'retry', delay: 0 })
    const inTwelve = new Date(first.now + 12_000).toUTCString()
    expect(decideRetry(status(429, inTwelve), first, policy)).toMatchObject({ action: 'retry', delay: 12_000 })
    expect(decideRetry(status(429, '3600'), first, policy)).toMatchObject({
      action: 'retry',
      delay: policy.maxRetryAfter,
    })
    // Unreadable: ordinary backoff, for this batch alone.
    expect(decideRetry(status(429, 'soon'), first, policy)).toMatchObject({
      action: 'retry',
      delay: backoff(1, 0.5, policy),
      retryAfter: false,
    })
  })
})

describe('backoff', () => {
  it('doubles from baseDelay with jitter in the upper half, capped at maxDelay', () => {
    const { baseDelay, maxDelay } = policy
    expect(backoff(1, 0, policy)).toBe(baseDelay / 2)
    expect(backoff(1, 0.999_999, policy)).toBe(baseDelay)
    expect(backoff(2, 0, policy)).toBe(baseDelay)
    expect(backoff(3, 0.5, policy)).toBe(baseDelay * 4 * 0.75)
    expect(backoff(30, 0, policy)).toBe(maxDelay / 2)
    expect(backoff(30, 0.999_999, policy)).toBe(maxDelay)
  })
})

describe('parseRetryAfter', () => {
  it('reads seconds and dates, and ignores what it cannot read', () => {
    expect(parseRetryAfter(undefined, 0)).toBeUndefined()
    expect(parseRetryAfter(' 2 ', 0)).toBe(2000)
    expect(parseRetryAfter('-1', 0)).toBeUndefined()
    expect(parseRetryAfter('Thu, 01 Jan 1970 00:00:05 GMT', 1000)).toBe(4000)
    expect(parseRetryAfter('Thu, 01 Jan 1970 00:00:05 GMT', 9000)).toBe(0)
  })
})
