import { equalJitterBackoff, parseRetryAfter as parseHeader } from '../shared/retry'
import { describeApiError, readApiError } from './api-error'
/** How one request for a batch ended. `sent`: the body's bytes as handed to the wire (compressed or not). */
export type AttemptOutcome = (
  | {
      kind: 'response'
      status: number
      retryAfter?: string | undefined
      /** The first bytes of a refusal's body (not 2xx), which may say why. */
      body?: string | undefined
    }
  | { kind: 'network-error'; error: unknown }
  | { kind: 'timeout' }
) & { sent?: number | undefined }

/** The numbers that bound retries. All durations in milliseconds. */
export interface RetryPolicy {
  /** Retries after the first attempt. */
  readonly maxRetries: number
  /** The first backoff; each later one doubles, up to `maxDelay`. */
  readonly baseDelay: number
  /** The longest backoff between two attempts. */
  readonly maxDelay: number
  /** The longest a `Retry-After` answer can make the client wait. */
  readonly maxRetryAfter: number
  /** No retry starts later than this after the first attempt. */
  readonly maxElapsed: number
}

export const DEFAULT_RETRY_POLICY: Omit<RetryPolicy, 'maxRetries'> = Object.freeze({
  baseDelay: 250,
  maxDelay: 10_000,
  maxRetryAfter: 30_000,
  maxElapsed: 60_000,
})

/** What to do after an attempt. */
export type RetryDecision =
  | { action: 'delivered' }
  /**
   * `retryAfter`: the delay is the API's `Retry-After`, which holds every batch of the client,
   * not only this one.
   */
  | { action: 'retry'; delay: number; reason: string; retryAfter: boolean }
  /** 413: the body was too large for the server; send each half on its own. */
  | { action: 'split' }
  | { action: 'fail'; reason: string }

export interface AttemptContext {
  /** Attempts made so far for this batch, including the one that produced the outcome (1-based). */
  attempts: number
  /** Milliseconds since the batch's first attempt. */
  elapsed: number
  /** Messages in the batch (a batch of one cannot be split). */
  batchSize: number
  /** The current time, for a `Retry-After` given as an HTTP date. */
  now: number
  /** A number in [0, 1) for the jitter. */
  random: number
}

/**
 * The whole retry decision, pure. Retried: network errors, timeouts, 408, 429 (honouring
 * `Retry-After`, clamped) and 5xx, with exponential backoff and jitter, until `maxRetries`
 * retries or `maxElapsed` would be passed. A 413 splits a batch of several messages. Other
 * answers (other 4xx, 1xx, 3xx) fail at once: sending the same bytes again would fail again.
 */
export function decideRetry(outcome: AttemptOutcome, context: AttemptContext, policy: RetryPolicy): RetryDecision {
  const verdict = classify(outcome)
  if (verdict.kind === 'delivered') return { action: 'delivered' }
  if (verdict.kind === 'too-large') {
    return context.batchSize > 1
      ? { action: 'split' }
      : { action: 'fail', reason: 'HTTP 413: the server refused the message as too large' }
  }
  if (verdict.kind === 'final') return { action: 'fail', reason: verdict.reason }

  if (context.attempts > policy.maxRetries) {
    return { action: 'fail', reason: `${verdict.reason}; gave up after ${context.attempts} attempts` }
  }
  const retryAfter = outcome.kind === 'response' ? parseRetryAfter(outcome.retryAfter, context.now) : undefined
  const delay =
    retryAfter === undefined
      ? backoff(context.attempts, context.random, policy)
      : Math.min(retryAfter, policy.maxRetryAfter)
  if (context.elapsed + delay > policy.maxElapsed) {
    return {
      action: 'fail',
      reason: `${verdict.reason}; gave up after ${context.attempts} attempts over ${context.elapsed} ms`,
    }
  }
  return { action: 'retry', delay, reason: verdict.reason, retryAfter: retryAfter !== undefined }
}

type Verdict =
  | { kind: 'delivered' }
  | { kind: 'too-large' }
  | { kind: 'retryable'; reason: string }
  | { kind: 'final'; reason: string }

function classify(outcome: AttemptOutcome): Verdict {
  if (outcome.kind === 'timeout') return { kind: 'retryable', reason: 'request timed out' }
  if (outcome.kind === 'network-error')
    return { kind: 'retryable', reason: `network error: ${errorText(outcome.error)}` }
  const { status } = outcome
  if (status >= 200 && status < 300) return { kind: 'delivered' }
  if (status === 413) return { kind: 'too-large' }
  // The API's own reason, where its answer gives one: "HTTP 401: unknown write key (ERR_…)".
  const said = readApiError(outcome.body)
  const reason = said === undefined ? `HTTP ${status}` : `HTTP ${status}: ${describeApiError(said)}`
  if (status === 408 || status === 429 || status >= 500) return { kind: 'retryable', reason }
  return { kind: 'final', reason }
}

/**
 * Backoff before retry number `attempts`: `baseDelay × 2^(attempts − 1)`, capped at `maxDelay`,
 * then "equal jitter" — a random point in its upper half — so that clients recovering from the
 * same outage spread out, yet none retries almost at once.
 */
export function backoff(attempts: number, random: number, policy: Pick<RetryPolicy, 'baseDelay' | 'maxDelay'>): number {
  return equalJitterBackoff(attempts, random, policy.baseDelay, policy.maxDelay)
}

/** `Retry-After` as milliseconds to wait: delay-seconds or an HTTP date; `undefined` if absent or unreadable. */
export function parseRetryAfter(header: string | undefined, now: number): number | undefined {
  return parseHeader(header, now)
}

function errorText(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code
    return typeof code === 'string' ? `${code} ${error.message}` : error.message
  }
  return String(error)
}
