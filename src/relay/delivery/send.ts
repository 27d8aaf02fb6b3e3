import { SEND_STORED, type SendsStored } from '../../webhooks/stored'
import type { DueDelivery } from '../store/store'
import { type RouteStep, runStep, type StepVerdict } from './delivery-step'
import type { AttemptResult, Destination } from './destination'

/**
 * Makes one attempt of `delivery` through `destination`, to `urls` only when the breaker left some
 * of the destination's URLs out. When `step` is given (the worker ran none before: a probe), it
 * runs first on the stored message: what it chooses is what is formatted and sent. Never
 * rejects: a destination that is gone or throws is an `unsent` result (no request was made;
 * retrying would not change that).
 */
export async function sendAttempt(
  destination: Destination | undefined,
  delivery: DueDelivery,
  urls: readonly string[] | undefined,
  step?: RouteStep,
): Promise<AttemptResult> {
  if (destination === undefined) {
    return { kind: 'unsent', error: `the source no longer has the ${delivery.destination} destination` }
  }
  let message = delivery.message
  let logs: readonly string[] | undefined
  if (step !== undefined) {
    const verdict = await runStep(step, message)
    if (verdict.kind !== 'send') return unsentBy(verdict)
    message = verdict.message
    logs = verdict.logs
  }
  const sent = await send(destination, message, urls)
  return logs === undefined || logs.length === 0 ? sent : { ...sent, logs }
}

/** The attempt's result when a step ended it before any request. */
export function unsentBy(verdict: Exclude<StepVerdict, { kind: 'send' }>): AttemptResult {
  const logs = verdict.logs === undefined || verdict.logs.length === 0 ? {} : { logs: verdict.logs }
  switch (verdict.kind) {
    case 'filtered':
      return { kind: 'filtered', reason: verdict.reason, ...logs }
    case 'retry':
      return { kind: 'function-retry', error: verdict.error, ...logs }
    case 'failed':
      return { kind: 'unsent', error: verdict.error, ...logs }
  }
}

async function send(
  destination: Destination,
  message: DueDelivery['message'],
  urls: readonly string[] | undefined,
): Promise<AttemptResult> {
  try {
    const subset = urls !== undefined && urls.length < (destination.urls?.length ?? 0)
    const options = subset ? { urls } : undefined
    // The message was validated at ingest: the Webhooks destination formats it without checking it again.
    const sendStored = (destination as Partial<SendsStored>)[SEND_STORED]
    const result = await (sendStored !== undefined
      ? sendStored.call(destination, message, options)
      : subset
        ? destination.send(message, options)
        : destination.send(message))
    return { kind: 'sent', result }
  } catch (error) {
    // A destination reports delivery failures in its result; it throws only for a message it
    // can never send (one it cannot format), which retrying would not change.
    return { kind: 'unsent', error: `the destination threw: ${(error as Error).message}` }
  }
}
