import { BLOCKED_ADDRESS_CODE } from '../shared/blocked-address'
import { validRetryAfter } from '../shared/retry'
import { nextAttemptAt } from './retry-schedule'

// The Webhooks destination's one retry rule: which failures are worth another attempt, and what
// becomes of a delivery after each attempt. The arithmetic of "when" is nextAttemptAt's
// (retry-schedule.ts); everything that decides is here.

/** One request of an attempt, as the rule reads it. */
export interface RequestFacts {
  /** The HTTP status, when there was an answer. */
  status?: number | undefined
  /** The error's stable code, when the request failed without an answer. */
  code?: string | undefined
}

/** A 2xx answer: the message is delivered. */
export function isSuccess(request: RequestFacts): boolean {
  return request.status !== undefined && request.status >= 200 && request.status < 300
}

/**
 * A failure worth another attempt: no answer (a timeout, a network error), 429 or 5xx. Other 4xx
 * and redirects are final, and so is a connection the SSRF guard refused (a configuration matter).
 */
export function isRetryableFailure(request: RequestFacts): boolean {
  if (request.code === BLOCKED_ADDRESS_CODE) return false
  if (request.status === undefined) return true
  return request.status === 429 || request.status >= 500
}

/** What one attempt came to, as the destination reports it. */
export interface AttemptFacts {
  ok: boolean
  /** Whether any request failed in a way worth another attempt ({@link isRetryableFailure}). */
  retryable: boolean
  /** Every request made. */
  attempts: readonly RequestFacts[]
  /** A receiver's `Retry-After`, ms. */
  retryAfterMs?: number | undefined
}

/** What becomes of a delivery after an attempt. */
export type RetryDecision =
  | { kind: 'delivered' }
  | { kind: 'retry'; at: number }
  | { kind: 'give-up'; why: 'not-retryable' | 'window-spent' }

/**
 * The decision after attempt number `attempt` (1 for the first) of a delivery whose window began
 * at `firstAttemptAt`: delivered on any 2xx; otherwise, when the failure is retryable, again at the
 * time `schedule` gives (honouring a `Retry-After` that is a real wait: finite and ≥ 0; any other
 * value is ignored), or given up once the 4-hour window is spent; otherwise given up at once.
 *
 * @param schedule When to try next (the default is the platform's: {@link nextAttemptAt}).
 * @throws whatever `schedule` throws.
 */
export function decideNextStep(
  facts: { result: AttemptFacts; attempt: number; firstAttemptAt: number; now: number },
  schedule: (state: {
    attempt: number
    firstAttemptAt: number
    now: number
    retryAfterMs?: number
  }) => number | undefined = nextAttemptAt,
): RetryDecision {
  const { result } = facts
  if (result.ok) return { kind: 'delivered' }
  // Every URL refused by the SSRF guard: whatever the destination said, retrying changes nothing.
  const blocked = result.attempts.length > 0 && result.attempts.every((r) => r.code === BLOCKED_ADDRESS_CODE)
  if (!result.retryable || blocked) return { kind: 'give-up', why: 'not-retryable' }
  const retryAfterMs = validRetryAfter(result.retryAfterMs)
  const at = schedule({
    attempt: facts.attempt,
    firstAttemptAt: facts.firstAttemptAt,
    now: facts.now,
    ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
  })
  return at === undefined ? { kind: 'give-up', why: 'window-spent' } : { kind: 'retry', at }
}
