import type { MessageOutcome } from '../destinations/destination'

export type { DestinationSender, RetryPolicy } from '../destinations/destination'

/**
 * What one attempt came to: the destination's outcome for the message, or why nothing was sent at
 * all. `logs`: the `console` lines the destination's function printed during the attempt, kept
 * with it.
 */
export type AttemptResult = { logs?: readonly string[] } & (
  | { kind: 'sent'; outcome: MessageOutcome }
  /** Nothing sent: the destination is gone from the configuration, or its function failed. */
  | { kind: 'unsent'; error: string }
  /** The delivery step (a destination's function) dropped the message: the delivery ends as `filtered`, with `reason`. */
  | { kind: 'filtered'; reason: string }
  /** The delivery step (a function's `RetryError`) asked for a retry: retried on the usual schedule. */
  | { kind: 'function-retry'; error: string }
)

/** The requests an attempt made (none when nothing was sent). */
export function requestsOf(attempt: AttemptResult | undefined): NonNullable<MessageOutcome['requests']> {
  return attempt?.kind === 'sent' ? (attempt.outcome.requests ?? []) : []
}

/**
 * The requests the breaker judges `targets` by: the attempt's own, or, for a destination that
 * reports none (no HTTP), one per target as the breaker reads a request: answered (up) when the
 * message went, failed (down) when its failure is worth a retry. A final failure with no request
 * (a message the destination cannot send) says nothing of the targets.
 */
export function breakerRequestsOf(
  attempt: AttemptResult | undefined,
  targets: readonly string[],
): NonNullable<MessageOutcome['requests']> {
  const requests = requestsOf(attempt)
  if (attempt?.kind !== 'sent' || requests.length > 0) return requests
  const { outcome } = attempt
  if (outcome.kind === 'delivered') return targets.map((url) => ({ url, ms: 0, status: 200 }))
  return outcome.retryable ? targets.map((url) => ({ url, ms: 0, error: outcome.error })) : []
}
