import type { AttemptResult } from '../destination'
import type { TargetLimits } from '../../destinations/destination'
import type { DeliveryAttempt } from '../../../webhooks/index'
import { heldTexts } from '../../store/endpoint-held'

/**
 * A request that a limited URL's receiver answered `429` with a `Retry-After`: it holds that URL
 * for as long, and is neither an attempt nor a failure (docs/delivery-controls.md).
 */
export function isHoldRequest(request: DeliveryAttempt, limited: ReadonlyMap<string, TargetLimits>): boolean {
  return request.status === 429 && request.retryAfterMs !== undefined && limited.has(request.url)
}

/** Why a held delivery waits, and for how long: the delivery log's words. */
export interface Deferral {
  waitMs: number
  error: string
}

/**
 * The deferral of an attempt whose every request was a {@link isHoldRequest}: the delivery goes
 * back to the outbox for the longest `Retry-After`, without counting an attempt. `undefined` for
 * any other attempt (one request delivered or failed otherwise: judged as usual).
 */
export function deferralOf(
  attempt: AttemptResult | undefined,
  limited: ReadonlyMap<string, TargetLimits>,
): Deferral | undefined {
  if (attempt?.kind !== 'sent' || attempt.outcome.kind !== 'failed' || !attempt.outcome.retryable) return undefined
  const requests = attempt.outcome.requests ?? []
  if (requests.length === 0 || !requests.every((request) => isHoldRequest(request, limited))) return undefined
  const waitMs = Math.max(...requests.map((request) => request.retryAfterMs ?? 0))
  const held = requests.map(({ url }) => ({ reason: 'retry_after' as const, url, waitMs }))
  return { waitMs, error: heldTexts(held) }
}
