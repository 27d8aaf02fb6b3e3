import { SEND_STORED, type SendsStored } from '../../webhooks/stored'
import type { DueDelivery } from '../store/store'
import { DROP_DELIVERY, type DeliveryStep } from './delivery-step'
import type { AttemptResult, Destination } from './destination'
import { type FunctionCaller, runFunctionStep } from './functions/step'

/**
 * Makes one attempt of `delivery` through `destination`, to `urls` only when the breaker left some
 * of the destination's URLs out. The destination's function, when it has one, runs first on the
 * stored message (docs/functions.md): what it returns is what is formatted and sent. Never
 * rejects: a destination that is gone or throws is an `unsent` result (no request was made;
 * retrying would not change that).
 */
export async function sendAttempt(
  destination: Destination | undefined,
  delivery: DueDelivery,
  urls: readonly string[] | undefined,
  step?: DeliveryStep,
  fn?: FunctionCaller,
): Promise<AttemptResult> {
  if (destination === undefined) {
    return { kind: 'unsent', error: `the source no longer has the ${delivery.destination} destination` }
  }
  let message = delivery.message
  if (step !== undefined) {
    const stepped = stepOf(step, delivery)
    if (stepped === DROP_DELIVERY) return { kind: 'dropped' }
    if (stepped instanceof Error) return { kind: 'unsent', error: `the delivery step refused it: ${stepped.message}` }
    message = stepped
  }
  if (fn !== undefined) {
    const ran = await runFunctionStep(fn, message)
    if (ran.kind !== 'send') return ran
    message = ran.message
  }
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

// The step's answer; one that throws answers its error.
function stepOf(step: DeliveryStep, delivery: DueDelivery): ReturnType<DeliveryStep> {
  try {
    return step(delivery.message, delivery.source)
  } catch (error) {
    return error instanceof Error ? error : new Error(String(error))
  }
}
