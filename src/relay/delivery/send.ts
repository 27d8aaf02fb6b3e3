import type { DestinationSender, MessageOutcome, OutboundMessage } from '../destinations/destination'
import type { DueDelivery } from '../store/store'
import { type RouteStep, runStep, type StepVerdict } from './delivery-step'
import type { AttemptResult } from './destination'

/** Sends one message of a delivery: alone, or gathered into a batch of its route. */
export type SendOne = (message: OutboundMessage) => Promise<MessageOutcome>

/**
 * Makes one attempt of `delivery` through `sender`, to `targets` only when the breaker left some
 * of the sender's targets out. When `step` is given (the worker ran none before: a probe), it runs
 * first on the stored message: what it chooses is what is sent. `send` gathers the message into
 * a batch; without it, the message is a batch of its own. Never rejects: a destination that is
 * gone is an `unsent` result (nothing was sent; retrying would not change that).
 */
export async function sendAttempt(
  sender: DestinationSender | undefined,
  delivery: DueDelivery,
  targets: readonly string[] | undefined,
  step?: RouteStep,
  send?: SendOne,
): Promise<AttemptResult> {
  if (sender === undefined) {
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
  const outbound = { deliveryId: delivery.id, source: delivery.source, message }
  const outcome = await (send ?? alone(sender, targets))(outbound)
  const sent: AttemptResult = { kind: 'sent', outcome }
  return logs === undefined || logs.length === 0 ? sent : { ...sent, logs }
}

/** Sends a message as a batch of one, to `targets` when they are fewer than the sender's. */
export function alone(sender: DestinationSender, targets: readonly string[] | undefined): SendOne {
  const subset = targets !== undefined && targets.length < sender.targets.length
  return async (message) => {
    try {
      const outcomes = await (subset ? sender.sendBatch([message], { targets }) : sender.sendBatch([message]))
      return outcomes[0] ?? { kind: 'failed', retryable: true, error: 'the destination answered no outcome' }
    } catch (error) {
      // The contract says never; a sender that throws cannot send the message, and retrying
      // would not change that.
      return { kind: 'failed', retryable: false, error: `the destination threw: ${(error as Error).message}` }
    }
  }
}

/** The attempt's result when a step ended it before any request. */
export function unsentBy(verdict: Exclude<StepVerdict, { kind: 'send' }>): AttemptResult {
  // A function's verdict always carries its lines (maybe none): the attempt it ended is listed.
  const logs = verdict.logs === undefined ? {} : { logs: verdict.logs }
  switch (verdict.kind) {
    case 'filtered':
      return { kind: 'filtered', reason: verdict.reason, ...logs }
    case 'retry':
      return { kind: 'function-retry', error: verdict.error, ...logs }
    case 'failed':
      return { kind: 'unsent', error: verdict.error, ...logs }
  }
}
