import { redactUrl } from '../../shared/redact-url'
import { log } from '../log'
import type { AttemptOutcome, DueDelivery } from '../store/store'
import { validRetryAfter } from '../../shared/retry'
import { decideNextStep } from '../../webhooks/index'
import type { DestinationResult, RetrySchedule } from './destination'
import { describeFailure } from './failure-text'

/** One settled attempt, as {@link outcomeOf} judges it. */
export interface SettledInput {
  delivery: DueDelivery
  /** When the attempt started, epoch ms. */
  at: number
  result: DestinationResult
  /** URLs the breaker left out of the attempt, each with why (`https://…: circuit open`). */
  skipped: readonly string[]
  schedule: RetrySchedule
  now: () => number
}

/**
 * What becomes of a delivery after an attempt: delivered; due again when the retry rule says
 * (honouring a valid `Retry-After`); or dead-lettered, when the failure is not retryable, every
 * URL was refused by the SSRF guard, or the retry window is spent. May throw if the retry rule
 * does: the caller dead-letters with {@link crashedOutcome} then.
 */
export function outcomeOf({ delivery, at, result, skipped, schedule, now }: SettledInput): AttemptOutcome {
  const base = { id: delivery.id, at, requests: result.attempts }
  if (result.ok) {
    log('delivery %d of source %s delivered', delivery.id, delivery.source)
    return { ...base, next: { status: 'delivered' } }
  }
  // The stored error (admin-only) keeps whole URLs; the log shows them without query strings.
  // URLs the breaker left out are named with why, after those that were tried.
  const error = [describeFailure(result), ...skipped.map((s) => `skipped ${s}`)].join('; ')
  const logged = describeFailure(result, redactUrl)
  if (result.retryAfterMs !== undefined && validRetryAfter(result.retryAfterMs) === undefined) {
    log(
      'delivery %d of source %s: ignoring a Retry-After of %s ms (not a finite number ≥ 0)',
      delivery.id,
      delivery.source,
      result.retryAfterMs,
    )
  }
  const decision = decideNextStep(
    { result, attempt: delivery.attempts + 1, firstAttemptAt: delivery.firstAttemptAt ?? at, now: now() },
    schedule,
  )
  switch (decision.kind) {
    case 'delivered':
      // decideNextStep answers this only for an ok result, handled above.
      return { ...base, next: { status: 'delivered' } }
    case 'retry':
      log('delivery %d of source %s failed (%s); next attempt at %d', delivery.id, delivery.source, logged, decision.at)
      return { ...base, next: { status: 'pending', nextAttemptAt: decision.at, error } }
    case 'give-up':
      if (decision.why === 'window-spent') {
        log('delivery %d of source %s dead-lettered: retry window spent (%s)', delivery.id, delivery.source, logged)
        return { ...base, next: { status: 'failed', error: `retry window spent; last error: ${error}` } }
      }
      log('delivery %d of source %s dead-lettered: not retryable (%s)', delivery.id, delivery.source, logged)
      return { ...base, next: { status: 'failed', error } }
  }
}

/** A delivery dead-lettered because the worker itself failed on its attempt (a bug, a bad value). */
export function crashedOutcome(
  delivery: DueDelivery,
  at: number,
  error: unknown,
  requests: AttemptOutcome['requests'] = [],
): AttemptOutcome {
  const message = error instanceof Error ? error.message : String(error)
  log(
    'delivery %d of source %s dead-lettered: the worker failed on its outcome: %s',
    delivery.id,
    delivery.source,
    error instanceof Error ? (error.stack ?? message) : message,
  )
  return {
    id: delivery.id,
    at,
    requests,
    next: { status: 'failed', error: `the relay failed to handle the attempt: ${message}` },
  }
}
