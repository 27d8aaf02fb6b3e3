import { describe, expect, it } from 'vitest'
import { isRetryableFailure, isSuccess } from '../../src/webhooks/retry-rule'
import { decideNextStep, nextAttemptAt, RETRY_WINDOW_MS } from '../../src/webhooks/index'

const T0 = Date.parse('2026-01-01T00:00:00.000Z')
// The schedule with its jitter pinned to the middle: after attempt 1 the wait is 0.75 s.
const schedule = (state: Parameters<typeof nextAttemptAt>[0]) => nextAttemptAt(state, () => 0.5)

describe('isSuccess and isRetryableFailure', () => {
  it.each([
    [{ status: 200 }, true, false],
    [{ status: 204 }, true, false],
    [{ status: 301 }, false, false], // redirects are not followed: a failure, final
    [{ status: 404 }, false, false],
    [{ status: 408 }, false, false],
    [{ status: 429 }, false, true],
    [{ status: 500 }, false, true],
    [{ status: 503 }, false, true],
    [{ code: 'ERR_WEBHOOK_TIMEOUT' }, false, true], // no answer in time
    [{ code: 'ECONNREFUSED' }, false, true],
    [{ code: 'ERR_BLOCKED_ADDRESS' }, false, false], // refused by the SSRF guard: configuration
  ])('%j: success %s, retryable %s', (request, success, retryable) => {
    expect(isSuccess(request)).toBe(success)
    expect(isRetryableFailure(request)).toBe(retryable)
  })
})

describe('decideNextStep', () => {
  const failed = (
    retryable: boolean,
    attempts: { status?: number; code?: string }[] = [{ status: 503 }],
    retryAfterMs?: number,
  ) => ({
    ok: false,
    retryable,
    attempts,
    ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
  })
  it.each([
    ['a 2xx', { ok: true, retryable: false, attempts: [{ status: 200 }] }, 1, T0, { kind: 'delivered' }],
    ['a retryable failure', failed(true), 1, T0, { kind: 'retry', at: T0 + 750 }],
    [
      'a Retry-After longer than the backoff',
      failed(true, [{ status: 429 }], 60_000),
      1,
      T0,
      { kind: 'retry', at: T0 + 60_000 },
    ],
    [
      'a Retry-After that is no real wait (ignored)',
      failed(true, [{ status: 503 }], Number.NaN),
      1,
      T0,
      { kind: 'retry', at: T0 + 750 },
    ],
    ['a final failure (a 4xx)', failed(false, [{ status: 404 }]), 1, T0, { kind: 'give-up', why: 'not-retryable' }],
    [
      'every URL refused by the SSRF guard, whatever the flag says',
      failed(true, [{ code: 'ERR_BLOCKED_ADDRESS' }]),
      1,
      T0,
      { kind: 'give-up', why: 'not-retryable' },
    ],
    [
      'a retryable failure at the end of the window',
      failed(true),
      30,
      T0 + RETRY_WINDOW_MS,
      { kind: 'give-up', why: 'window-spent' },
    ],
  ] as const)('%s', (_name, result, attempt, now, expected) => {
    expect(decideNextStep({ result, attempt, firstAttemptAt: T0, now }, schedule)).toEqual(expected)
  })

  it('uses the platform schedule by default, never past the 4-hour window', () => {
    const decision = decideNextStep({
      result: failed(true),
      attempt: 40,
      firstAttemptAt: T0,
      now: T0 + RETRY_WINDOW_MS - 1,
    })
    expect(decision).toEqual({ kind: 'retry', at: T0 + RETRY_WINDOW_MS })
  })
})
