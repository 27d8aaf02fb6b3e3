import { randomUUID } from 'node:crypto'
import type { DeleteMessage } from '../../shared/message'
import { type RoutedSource, WEBHOOKS_DESTINATION } from '../config/sources'
import type { NewDelivery, Store } from '../store/store'

/**
 * Erases what the relay keeps of `userId` (docs/replay.md, "Erasure"), then queues a
 * `{ type: 'delete', userId, timestamp }` message for every source that has the Webhooks
 * destination, in one transaction. Resolves with the names of the sources it went to.
 */
export async function requestDeletion(
  store: Store,
  sources: readonly RoutedSource[],
  userId: string,
): Promise<string[]> {
  await eraseUserData(store, userId)
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
  return deliveries.map((d) => d.source)
}

/**
 * Erases `userId`'s stored messages, so that no replay can send them again: each settled
 * delivery's body (an `erased` stub is left, with its type and message id) and search keys, and
 * what its requests recorded of the receiver's answers and the headers sent; a dead letter is
 * settled unsent; one still pending is sent as before, and never replayed. Delete messages are
 * kept: they are what is sent. The violations tracking plans recorded of the user's messages
 * (docs/plans.md) are erased too. Resolves with how many deliveries were erased.
 */
export async function eraseUserData(store: Store, userId: string): Promise<number> {
  const erased = await store.replays.eraseUser(userId)
  await store.violations.eraseUser(userId)
  return erased
}
