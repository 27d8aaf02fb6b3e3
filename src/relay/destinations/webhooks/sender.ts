import { BLOCKED_ADDRESS_CODE } from '../../../shared/blocked-address'
import type { DeliverableMessage } from '../../../shared/message'
import type { DeliveryResult } from '../../../webhooks/index'
import { SEND_STORED, type SendsStored } from '../../../webhooks/stored'
import {
  type DestinationSender,
  type MessageOutcome,
  ONE_AT_A_TIME,
  type OutboundMessage,
  type RetryPolicy,
} from '../destination'
import { describeFailure } from '../failure-text'

/**
 * What the sender drives: the Webhooks destination, or anything that sends one message at a time
 * to `urls` and answers a {@link DeliveryResult} (tests' fakes).
 */
export interface SendsOne {
  send(message: DeliverableMessage, options?: { urls?: readonly string[] }): Promise<DeliveryResult>
  readonly urls?: readonly string[]
}

/**
 * The Webhooks destination as a {@link DestinationSender}: its URLs are the targets, each batch
 * is one message (its requests go to every URL at once), and each result becomes an outcome.
 */
export function webhookSender(destination: SendsOne, retries: RetryPolicy): DestinationSender {
  return {
    targets: destination.urls ?? [],
    batching: ONE_AT_A_TIME,
    retries,
    sendBatch: (batch, options) => Promise.all(batch.map((one) => sendOne(destination, one, options?.targets))),
    close: async () => {},
  }
}

async function sendOne(
  destination: SendsOne,
  { message }: OutboundMessage,
  urls: readonly string[] | undefined,
): Promise<MessageOutcome> {
  try {
    const options = urls === undefined ? undefined : { urls }
    // The message was validated at ingest: the Webhooks destination formats it without checking
    // it again.
    const sendStored = (destination as Partial<SendsStored>)[SEND_STORED]
    const result = await (sendStored !== undefined
      ? sendStored.call(destination, message, options)
      : options === undefined
        ? destination.send(message)
        : destination.send(message, options))
    return outcomeOf(result)
  } catch (error) {
    // A destination reports delivery failures in its result; it throws only for a message it
    // can never send (one it cannot format), which retrying would not change.
    return { kind: 'failed', retryable: false, error: `the destination threw: ${(error as Error).message}` }
  }
}

/** A Webhooks result as the relay judges it: delivered on any 2xx, else a failure with why. */
export function outcomeOf(result: DeliveryResult): MessageOutcome {
  const requests = result.attempts
  if (result.ok) return { kind: 'delivered', requests }
  // Every URL refused by the SSRF guard: whatever the destination said, retrying changes nothing.
  const blocked = requests.length > 0 && requests.every((r) => r.code === BLOCKED_ADDRESS_CODE)
  return {
    kind: 'failed',
    retryable: result.retryable && !blocked,
    error: describeFailure(result),
    requests,
    ...(result.retryAfterMs === undefined ? {} : { retryAfterMs: result.retryAfterMs }),
  }
}
