import { describe, expect, it } from 'vitest'
import type { AttemptResult } from '../../../src/relay/delivery/destination'
import { expiredOutcome, judgedOutcome, outcomeOf } from '../../../src/relay/delivery/outcome'
import { outcomeOf as outcomeOfResult } from '../../../src/relay/destinations/webhooks/sender'
import { RETRY_WINDOW_MS } from '../../../src/webhooks/index'
import { dueDelivery, T0 } from '../fixtures/deliveries'
import { retries } from '../fixtures/worker'

// A Webhooks attempt's result, as the Webhooks module turns it into the message's outcome.
const sent = (status: number, retryAfterMs?: number): AttemptResult => ({
  kind: 'sent',
  outcome: outcomeOfResult({
    ok: status < 300,
    retryable: status === 429 || status >= 500,
    attempts: [{ url: 'https://a.example/', status, ms: 3 }],
    ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
  }),
})
const input = (
  attempt: AttemptResult,
  schedule: (state: { now: number }) => number | undefined = (state) => state.now + 1000,
) => ({
  delivery: dueDelivery(7, { attempts: 1, firstAttemptAt: T0 }),
  at: T0 + 10,
  attempt,
  skipped: [],
  retries: retries(schedule),
  now: () => T0 + 20,
})

describe('the outcome of an attempt', () => {
  it('is delivered on a 2xx, with its requests for the attempts log', () => {
    expect(outcomeOf(input(sent(200)))).toEqual({
      id: 7,
      at: T0 + 10,
      requests: [{ url: 'https://a.example/', status: 200, ms: 3 }],
      next: { status: 'delivered' },
    })
  })

  it('is due again when the schedule says after a retryable failure, naming the URLs left out', () => {
    const outcome = outcomeOf({ ...input(sent(503)), skipped: ['https://b.example/: circuit open'] })
    expect(outcome.next).toEqual({
      status: 'pending',
      nextAttemptAt: T0 + 1020,
      error: 'https://a.example/: HTTP 503; skipped https://b.example/: circuit open',
    })
  })

  it('is dead-lettered on a failure that is not retryable, or once the window is spent', () => {
    expect(outcomeOf(input(sent(404))).next).toEqual({ status: 'failed', error: 'https://a.example/: HTTP 404' })
    expect(outcomeOf(input(sent(503), () => undefined)).next).toEqual({
      status: 'failed',
      error: 'retry window spent; last error: https://a.example/: HTTP 503',
    })
  })

  it('is dead-lettered with why, and no request in the log, when nothing could be sent', () => {
    expect(outcomeOf(input({ kind: 'unsent', error: 'the destination threw: cannot format' }))).toEqual({
      id: 7,
      at: T0 + 10,
      requests: [],
      next: { status: 'failed', error: 'the destination threw: cannot format' },
    })
  })

  it('is dead-lettered with the error, keeping the requests, when the schedule throws', () => {
    const broken = () => {
      throw new Error('the schedule broke')
    }
    expect(() => outcomeOf(input(sent(503), broken))).toThrow('the schedule broke')
    expect(judgedOutcome(input(sent(503), broken))).toEqual({
      id: 7,
      at: T0 + 10,
      requests: [{ url: 'https://a.example/', status: 503, ms: 3 }],
      next: { status: 'failed', error: 'the relay failed to handle the attempt: the schedule broke' },
    })
  })

  it('of a delivery whose circuits stayed open past its window is dead-lettered unsent', () => {
    expect(expiredOutcome(dueDelivery(7), T0 + RETRY_WINDOW_MS, 'retry window spent; last error: x')).toEqual({
      id: 7,
      at: T0 + RETRY_WINDOW_MS,
      requests: [],
      next: { status: 'failed', error: 'retry window spent; last error: x' },
    })
  })
})
