import type { DeliveryView, Store } from '../store/store'

/**
 * `delivery` with the earlier delivery of its user it waits behind (`waitingBehind`), when it is
 * pending to an ordered destination and not first in line (docs/delivery-controls.md, "Ordering"):
 * what the delivery log says of why it waits. One look-up, for a pending delivery only.
 */
export async function withOrderWait(store: Pick<Store, 'ordering'>, delivery: DeliveryView): Promise<DeliveryView> {
  if (delivery.status !== 'pending') return delivery
  const ahead = await store.ordering.aheadOf(delivery.id)
  return ahead === undefined ? delivery : { ...delivery, waitingBehind: ahead }
}

/** What the delivery log says of a delivery waiting behind `ahead`, in words. */
export function orderWaitText(ahead: number): string {
  return `waiting behind delivery ${ahead} of the same user (the destination is ordered)`
}
