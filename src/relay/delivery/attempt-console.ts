import type { AttemptOutcome } from '../store/store'

/**
 * `outcome` with the `console` lines its function printed kept in the attempts log (docs/functions.md):
 * on the attempt's first request, or, when the function ended the attempt before any request
 * (filtered, retried, dead-lettered), on a record of its own with no URL, the outcome's error and
 * how long the attempt took (`ms`): every attempt a function ends is listed, with or without lines.
 * `logs` is `undefined` when no function ran: the outcome as it is.
 */
export function withConsole(outcome: AttemptOutcome, logs: readonly string[] | undefined, ms: number): AttemptOutcome {
  if (logs === undefined) return outcome
  const [first, ...rest] = outcome.requests
  if (first !== undefined) {
    return logs.length === 0 ? outcome : { ...outcome, requests: [{ ...first, console: logs }, ...rest] }
  }
  const error = 'error' in outcome.next ? { error: outcome.next.error } : {}
  const console = logs.length === 0 ? {} : { console: logs }
  return { ...outcome, requests: [{ url: '', ms, ...error, ...console }] }
}
