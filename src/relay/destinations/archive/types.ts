import type { DeliverableMessage } from '../../../shared/message'
import type { RetryState } from '../../../webhooks/index'

// The destination interface the relay's modules agree on, mirrored here so that the archive's core
// stands on its own; `module.ts` is the one place that meets the relay's own declaration.

/** One message of a batch, as the relay hands it to a destination. */
export interface OutboundMessage {
  /** The outbox id of this message's delivery: unique in the relay's store. */
  deliveryId: number
  source: string
  /** The message after the destination's function; has `messageId`. */
  message: DeliverableMessage
  /** When the relay received it, ISO 8601. */
  receivedAt: string
  sentAt?: string
}

/** What became of one message of a batch. */
export type MessageOutcome =
  | { kind: 'delivered'; target?: string; detail?: Record<string, unknown> }
  | { kind: 'failed'; retryable: boolean; error: string; target?: string; retryAfterMs?: number }

/** How a failed delivery is retried: the next attempt's time, and the window from the first. */
export interface RetryPolicy {
  schedule: (state: RetryState) => number | undefined
  /** ms from the first attempt. */
  window: number
}

/** The live sender of one source's destination. */
export interface DestinationSender {
  readonly targets: readonly string[]
  readonly batching: { maxMessages: number; maxWaitMs: number }
  readonly retries: RetryPolicy
  sendBatch(
    batch: readonly OutboundMessage[],
    options?: { targets?: readonly string[] },
  ): Promise<readonly MessageOutcome[]>
  close(): Promise<void>
}
