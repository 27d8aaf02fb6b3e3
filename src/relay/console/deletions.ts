import { randomUUID } from 'node:crypto'
import type { DeleteMessage } from '../../shared/message'
import { type RoutedSource, WEBHOOKS_DESTINATION } from '../config/sources'
import type { NewDelivery, Store } from '../store/store'

/**
 * Queues a `{ type: 'delete', userId, timestamp }` message for every source that has the Webhooks
 * destination, in one transaction, and erases the user's recorded violations of tracking plans.
 * Resolves with the names of the sources it went to.
 */
export async function requestDeletion(
  store: Store,
  sources: readonly RoutedSource[],
  userId: string,
): Promise<string[]> {
  const timestamp = new Date().toISOString()
  const deliveries: NewDelivery[] = []
  for (const source of sources) {
    if (!source.destinations.includes(WEBHOOKS_DESTINATION)) continue
    // Each source gets its own message id: receivers de-duplicate per message.
    const message: DeleteMessage = { type: 'delete', userId, timestamp, messageId: randomUUID() }
    deliveries.push({
      source: source.name,
      destination: WEBHOOKS_DESTINATION,
      messageId: message.messageId!,
      type: 'delete',
      json: JSON.stringify(message),
    })
  }
  await store.enqueue(deliveries)
  // An erasure covers what tracking plans recorded of the user's messages (docs/tracking-plans.md).
  await store.violations.eraseUser(userId)
  return deliveries.map((d) => d.source)
}
