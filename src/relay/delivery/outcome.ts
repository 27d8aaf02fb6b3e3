import { redactUrl } from '../../shared/redact-url'
import { type LogFields, log, logTime } from '../log'
import type { AttemptOutcome, DueDelivery } from '../store/store'
import { validRetryAfter } from '../../shared/retry'
import { type AttemptResult, type RetryPolicy, requestsOf } from './destination'
import { describeRequests } from '../destinations/failure-text'

/** One settled attempt, as {@link outcomeOf} judges it. */
export interface SettledInput {
  delivery: DueDelivery
  /** When the attempt started, epoch ms. */
  at: number
  attempt: AttemptResult
  /** URLs the breaker left out of the attempt, each with why (`https://…: circuit open`). */
  skipped: readonly string[]
  retries: RetryPolicy
  now: () => number
}

/**
 * What becomes of a delivery after an attempt: delivered; due again when the retry rule says
 * (honouring a valid `Retry-After`); or dead-lettered, when the failure is not retryable, every
 * URL was refused by the SSRF guard, no request could be made at all, or the retry window is
 * spent. May throw if the retry rule does: the caller dead-letters with {@link crashedOutcome} then.
 */
export function outcomeOf({ delivery, at, attempt, skipped, retries, now }: SettledInput): AttemptOutcome {
  if (attempt.kind === 'filtered')
    return { id: delivery.id, at, requests: [], next: { status: 'filtered', error: attempt.reason } }
  if (attempt.kind === 'function-retry') {
    // The usual schedule, as for a receiver's retryable failure; no request was made.
    const firstAttemptAt = delivery.firstAttemptAt ?? at
    const next = retries.schedule({ attempt: delivery.attempts + 1, firstAttemptAt, now: now() })
    if (next !== undefined)
      return {
        id: delivery.id,
        at,
        requests: [],
        next: { status: 'pending', nextAttemptAt: next, error: attempt.error },
      }
    logGivenUp(delivery, 'window-spent', attempt.error)
    return {
      id: delivery.id,
      at,
      requests: [],
      next: { status: 'failed', error: `retry window spent; last error: ${attempt.error}` },
    }
  }
  if (attempt.kind === 'unsent') {
    // Nothing was sent, so nothing goes in the attempts log; retrying would not change it.
    const error = [attempt.error, ...skipped.map((s) => `skipped ${s}`)].join('; ')
    logGivenUp(delivery, 'not-retryable', attempt.error)
    return { id: delivery.id, at, requests: [], next: { status: 'failed', error } }
  }
  const { outcome } = attempt
  const requests = outcome.requests ?? []
  if (outcome.kind === 'delivered') {
    // One line per message: debug only (at info it would be most of the log, and cost CPU).
    if (log.isLevelEnabled('debug')) {
      log.debug(`delivery ${delivery.id} of source ${delivery.source} delivered`, {
        event: 'delivered',
        ...fieldsOf(delivery),
      })
    }
    // The common case, built directly (no intermediate object to spread).
    const delivered: AttemptOutcome = { id: delivery.id, at, requests, next: { status: 'delivered' } }
    if (outcome.detail !== undefined) delivered.detail = outcome.detail
    return delivered
  }
  const base = { id: delivery.id, at, requests }
  // The stored error (admin-only) keeps whole URLs; the log shows them without query strings.
  // Targets the breaker left out are named with why, after those that were tried.
  const error = [outcome.error, ...skipped.map((s) => `skipped ${s}`)].join('; ')
  const logged = requests.length > 0 ? describeRequests(requests, redactUrl) : outcome.error
  if (outcome.retryAfterMs !== undefined && validRetryAfter(outcome.retryAfterMs) === undefined) {
    log.warn(
      `delivery ${delivery.id} of source ${delivery.source}: ignoring a Retry-After of ${outcome.retryAfterMs} ms (not a finite number ≥ 0)`,
      { event: 'retry-after-ignored', ...fieldsOf(delivery) },
    )
  }
  if (!outcome.retryable) {
    logGivenUp(delivery, 'not-retryable', logged)
    return { ...base, next: { status: 'failed', error } }
  }
  const retryAfterMs = validRetryAfter(outcome.retryAfterMs)
  const nextAt = retries.schedule({
    attempt: delivery.attempts + 1,
    firstAttemptAt: delivery.firstAttemptAt ?? at,
    now: now(),
    ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
  })
  if (nextAt === undefined) {
    logGivenUp(delivery, 'window-spent', logged)
    return { ...base, next: { status: 'failed', error: `retry window spent; last error: ${error}` } }
  }
  if (log.isLevelEnabled('debug')) {
    log.debug(
      `delivery ${delivery.id} of source ${delivery.source} failed (${logged}); next attempt at ${logTime(nextAt)}`,
      { event: 'retry-scheduled', ...fieldsOf(delivery), nextAttemptAt: logTime(nextAt) },
    )
  }
  return { ...base, next: { status: 'pending', nextAttemptAt: nextAt, error } }
}

function logGivenUp(delivery: DueDelivery, why: 'not-retryable' | 'window-spent', logged: string): void {
  const reason = why === 'window-spent' ? 'retry window spent' : 'not retryable'
  log.warn(`delivery ${delivery.id} of source ${delivery.source} dead-lettered: ${reason} (${logged})`, {
    event: 'dead-lettered',
    reason: why,
    ...fieldsOf(delivery),
  })
}

/**
 * {@link outcomeOf}, or, should judging the attempt fail (a bug, a bad value from the schedule),
 * the delivery dead-lettered with the error (it can be retried by hand) rather than left taken
 * forever or the process crashed.
 */
export function judgedOutcome(input: SettledInput): AttemptOutcome {
  try {
    return outcomeOf(input)
  } catch (error) {
    const { attempt } = input
    return crashedOutcome(input.delivery, input.at, error, requestsOf(attempt))
  }
}

/** A delivery whose every URL's circuit stayed open past its retry window: dead-lettered with `error`, unsent. */
export function expiredOutcome(delivery: DueDelivery, at: number, error: string): AttemptOutcome {
  log.warn(
    `delivery ${delivery.id} of source ${delivery.source} dead-lettered: retry window spent, its circuits open`,
    {
      event: 'dead-lettered',
      reason: 'window-spent',
      source: delivery.source,
      deliveryId: delivery.id,
      messageId: delivery.message.messageId,
    },
  )
  return { id: delivery.id, at, requests: [], next: { status: 'failed', error } }
}

/** A delivery dead-lettered because the worker itself failed on its attempt (a bug, a bad value). */
export function crashedOutcome(
  delivery: DueDelivery,
  at: number,
  error: unknown,
  requests: AttemptOutcome['requests'] = [],
): AttemptOutcome {
  const message = error instanceof Error ? error.message : String(error)
  log.error(
    `delivery ${delivery.id} of source ${delivery.source} dead-lettered: the worker failed on its outcome: ${
      error instanceof Error ? (error.stack ?? message) : message
    }`,
    { event: 'dead-lettered', reason: 'internal-error', ...fieldsOf(delivery) },
  )
  return {
    id: delivery.id,
    at,
    requests,
    next: { status: 'failed', error: `the relay failed to handle the attempt: ${message}` },
  }
}

/** The fields every line about one delivery carries. */
function fieldsOf(delivery: DueDelivery): LogFields {
  return {
    source: delivery.source,
    deliveryId: delivery.id,
    messageId: delivery.message.messageId,
    attempt: delivery.attempts + 1,
  }
}
