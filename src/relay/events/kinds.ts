import type { AttemptOutcome } from '../store/store'
import type { Violation } from '../store/violations'
import type { WriteKind } from './readings'

/**
 * Why a message was refused, as data (the `reason` says it to a person; metrics count by this):
 * - `invalid`: it fails the message rules (`findWireMessageProblem`), or cannot be serialized;
 * - `too_large`: its JSON is over `MAX_MESSAGE_BYTES`;
 * - `unstorable`: valid, but a store could not hold it (`findUnstorable`);
 * - `duplicate`: an earlier message of the same batch, accepted, has its `messageId`.
 */
export const REFUSAL_KINDS = ['invalid', 'too_large', 'unstorable', 'duplicate'] as const
export type RefusalKind = (typeof REFUSAL_KINDS)[number]

/** A message of a batch that was refused, by its index in the batch, and why. */
export interface Refusal {
  index: number
  /** One sentence for the client. */
  reason: string
  kind: RefusalKind
}

/** What ingest did with a request's messages. */
export interface IngestOutcome {
  /** Messages accepted (valid, and durably written for every destination they go to). */
  accepted: number
  /** The messages refused on their own, in batch order. */
  refused: Refusal[]
  /**
   * Accepted messages for which no delivery was written because the source's schema blocks them
   * (`schema.blockedEvents`): counted in `answer.accepted`, and by metrics as `filtered`. Never sent.
   */
  filtered: number
  /** What the source's tracking plan found in the accepted messages (recorded); absent when nothing. */
  violations?: readonly Violation[]
}

/** One attempt as it settled, for observers such as metrics. */
export interface SettledAttempt {
  source: string
  destination: string
  /** The delivered message's `messageId` (the outcome's `id` is the delivery's). */
  messageId?: string | undefined
  outcome: AttemptOutcome
  /** How long the attempt took, ms (every request of its fan-out, concurrently). */
  ms: number
}

/**
 * What ingest and delivery tell whoever listens (metrics; a live view later), as it happens:
 * - `ingested`: a request's messages were checked and the accepted ones committed;
 * - `filtered`: accepted messages the source's schema blocks (`schema.blockedEvents`), never delivered;
 * - `refused`: a request refused whole (the error answered: an `HttpError`, or what was thrown);
 * - `attempt`: a delivery attempt settled;
 * - `circuit`: this relay's own write opened or closed a webhook URL's circuit (not one it learnt
 *   of from another relay): alerts go once per change, from the relay that made it;
 * - `function`: a destination's function was called (`outcome`: sent, dropped, retry, error,
 *   timeout or memory), with how long it ran;
 * - `violation`: a request's messages broke the source's tracking plan (docs/plans.md).
 */
export type RelayEvent =
  | { type: 'ingested'; source: string; outcome: IngestOutcome }
  | { type: 'filtered'; source: string; count: number }
  | { type: 'refused'; error: unknown }
  | { type: 'attempt'; attempt: SettledAttempt }
  | {
      type: 'circuit'
      url: string
      change: 'opened' | 'closed'
      error?: string | undefined
      /** The HTTP status of the request that made the change, when the receiver answered. */
      status?: number | undefined
    }
  | { type: 'function'; source: string; outcome: string; ms: number }
  | { type: 'violation'; source: string; violations: readonly Violation[] }
  /**
   * A write to the store of `kind` ended: committed, or failed by the store itself (`error`, and
   * the `bytes` it tried to write when known); data the store refused is no failure of it.
   */
  | { type: 'write'; kind: WriteKind; error?: unknown; bytes?: number }
