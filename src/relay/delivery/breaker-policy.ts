import { validRetryAfter } from '../../shared/retry'
import type { DeliveryAttempt } from '../../webhooks/index'
import { isRetryableFailure } from '../../webhooks/retry-rule'
import { BLOCKED_ADDRESS_CODE } from '../../shared/blocked-address'

/** The breaker's thresholds, as the relay options give them (validated there, with the defaults). */
export interface BreakerPolicy {
  /** Failed requests in a row to one URL that open its circuit. */
  failureThreshold: number
  /** The wait before the first probe of an open circuit, ms; it doubles after each failed probe. */
  probeInterval: number
  /** The longest wait between two probes, ms. */
  maxProbeInterval: number
  /** Requests in flight at once to one URL, from this relay (every source together). */
  maxInFlightPerUrl: number
}

// A probe goes up to this fraction of its interval early, so that the circuits of URLs that
// failed together (and the relays watching them) do not probe in step.
const PROBE_JITTER = 0.2

/**
 * The wait before the next probe of a circuit whose probes failed `failedProbes` times since it
 * opened, ms: `probeInterval` doubled at each failed probe, capped at `maxProbeInterval`, then up to
 * 20 % earlier at random. A receiver's `Retry-After` is honoured on top: see {@link nextProbeAt}.
 */
export function probeDelay(failedProbes: number, policy: BreakerPolicy, random: () => number): number {
  const interval = Math.min(policy.maxProbeInterval, policy.probeInterval * 2 ** Math.min(failedProbes, 30))
  return Math.round(interval * (1 - PROBE_JITTER * random()))
}

/** When the next probe goes, epoch ms: after {@link probeDelay}, and never before a `Retry-After` asks. */
export function nextProbeAt(
  now: number,
  failedProbes: number,
  policy: BreakerPolicy,
  random: () => number,
  retryAfterMs?: number,
): number {
  return now + Math.max(probeDelay(failedProbes, policy, random), validRetryAfter(retryAfterMs) ?? 0)
}

/**
 * What one request says about its receiver, on the Webhooks destination's one retry rule
 * ({@link isRetryableFailure}): `down` for a failure worth retrying (a timeout, a network error,
 * 429, 5xx); `up` for any other answer — a 4xx is not retried, yet it shows the receiver is there,
 * so it closes a circuit; nothing when the relay itself refused to connect (the SSRF guard: a
 * matter of configuration, not of the receiver's health).
 */
export function verdictOf(request: DeliveryAttempt): 'up' | 'down' | undefined {
  if (request.code === BLOCKED_ADDRESS_CODE) return undefined
  return isRetryableFailure(request) ? 'down' : 'up'
}
