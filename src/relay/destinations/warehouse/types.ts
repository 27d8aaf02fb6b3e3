import type { DeliverableMessage } from '../../../shared/message'
import type { WarehouseConflict } from './schema/evolution'

// The shapes the warehouse shares with the relay's destinations (a message in, one outcome per
// message out), kept here so the loader stands and is tested on its own.

/** One delivery handed to the warehouse. */
export interface OutboundMessage {
  readonly deliveryId: number
  readonly source: string
  readonly message: DeliverableMessage
  /** When the relay received it, ISO 8601 (else the message's own `receivedAt`, set by ingest). */
  readonly receivedAt?: string | undefined
  /** The batch's `sentAt`, when the client sent one. */
  readonly sentAt?: string | undefined
}

/** What became of one message of a batch. */
export type MessageOutcome =
  | {
      readonly kind: 'delivered'
      readonly target?: string
      /** `conflicts`: values their columns could not hold, stored as `NULL`. */
      readonly detail?: { readonly conflicts: readonly WarehouseConflict[] }
    }
  | {
      readonly kind: 'failed'
      /** `true`: the warehouse was down or refused (retried); `false`: the message is at fault. */
      readonly retryable: boolean
      readonly error: string
      readonly target?: string
    }
