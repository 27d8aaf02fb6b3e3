import type { DeliverableMessage } from '../shared/message'
import type { DeliveryResult } from './delivery-result'

/**
 * The key under which a destination offers `send` for a message the relay validated at ingest and
 * kept in its outbox, formatted without being checked again. For the relay only, not part of the
 * package's API: a registry symbol, so the relay's bundle and the webhooks entry (built apart)
 * share it without either exporting it. Versioned: a change to the method's signature takes a new
 * key, so a relay and a destination of different builds never call each other wrongly (the relay
 * then falls back to the public `send`).
 */
export const SEND_STORED: unique symbol = Symbol.for('tracklet.webhooks.sendStored.v1')

/** A destination that can send stored messages (the Webhooks destination). */
export interface SendsStored {
  [SEND_STORED](message: DeliverableMessage, options?: { urls?: readonly string[] }): Promise<DeliveryResult>
}
