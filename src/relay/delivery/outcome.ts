import { redactUrl } from '../../shared/redact-url'
import { type LogFields, log, logTime } from '../log'
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
    // One line per message: debug only (at info it would be most of the log, and cost CPU).
    if (log.isLevelEnabled('debug')) {
      log.debug(`delivery ${delivery.id} of source ${delivery.source} delivered`, {
        event: 'delivered',
        ...fieldsOf(delivery),
      })
    }
    return { ...base, next: { status: 'delivered' } }
  }
  // The stored error (admin-only) keeps whole URLs; the log shows them without query strings.
  // URLs the breaker left out are named with why, after those that were tried.
  const error = [describeFailure(result), ...skipped.map((s) => `skipped ${s}`)].join('; ')
  const logged = describeFailure(result, redactUrl)
  if (result.retryAfterMs !== undefined && validRetryAfter(result.retryAfterMs) === undefined) {
    log.warn(
      `delivery ${delivery.id} of source ${delivery.source}: ignoring a Retry-After of ${result.retryAfterMs} ms (not a finite number ≥ 0)`,
      { event: 'retry-after-ignored', ...fieldsOf(delivery) },
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
      if (log.isLevelEnabled('debug')) {
        log.debug(
          `delivery ${delivery.id} of source ${delivery.source} failed (${logged}); next attempt at ${logTime(decision.at)}`,
          { event: 'retry-scheduled', ...fieldsOf(delivery), nextAttemptAt: logTime(decision.at) },
        )
      }
      return { ...base, next: { status: 'pending', nextAttemptAt: decision.at, error } }
    case 'give-up':
      if (decision.why === 'window-spent') {
        log.warn(`delivery ${delivery.id} of source ${delivery.source} dead-lettered: retry window spent (${logged})`, {
          event: 'dead-lettered',
          reason: 'window-spent',
          ...fieldsOf(delivery),
        })
        return { ...base, next: { status: 'failed', error: `retry window spent; last error: ${error}` } }
      }
      log.warn(`delivery ${delivery.id} of source ${delivery.source} dead-lettered: not retryable (${logged})`, {
        event: 'dead-lettered',
        reason: 'not-retryable',
        ...fieldsOf(delivery),
      })
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
