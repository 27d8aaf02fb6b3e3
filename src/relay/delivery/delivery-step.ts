import type { DeliverableMessage } from '../../shared/message'

/** What a {@link DeliveryStep} returns to have the delivery settled without sending anything. */
export const DROP_DELIVERY: unique symbol = Symbol('tracklet.relay.dropDelivery')

/**
 * An optional step each due delivery passes through before its destination formats and sends it
 * (functions, later: docs/maintainers.md, "Seams"). It gets the stored message and its source's
 * name, and returns the message to send (the same or another), {@link DROP_DELIVERY} (settled as
 * delivered, with no request), or an `Error` (dead-lettered with its message: no request is made,
 * and retrying would not change it). A step that throws counts as returning its error. Without a
 * step, the stored message goes as it is, at no cost.
 */
export type DeliveryStep = (
  message: DeliverableMessage,
  source: string,
) => DeliverableMessage | typeof DROP_DELIVERY | Error
