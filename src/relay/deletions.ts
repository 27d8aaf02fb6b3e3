import { randomUUID } from 'node:crypto'
import type { DeleteMessage } from '../shared/message'
import type { IngestSource } from './ingest'
import type { NewDelivery, Outbox } from './outbox'

/** The destination that receives deletion requests. */
const DELETION_DESTINATION = 'Webhooks'

/**
 * Queues a `{ type: 'delete', userId, timestamp }` message for every source that has the Webhooks
 * destination, in one transaction. Returns the names of the sources it went to.
 */
export function requestDeletion(outbox: Outbox, sources: readonly IngestSource[], userId: string): string[] {
  const timestamp = new Date().toISOString()
  const deliveries: NewDelivery[] = []
  for (const source of sources) {
    if (!source.destinations.includes(DELETION_DESTINATION)) continue
    // Each source gets its own message id: receivers de-duplicate per message.
    const message: DeleteMessage = { type: 'delete', userId, timestamp, messageId: randomUUID() }
    deliveries.push({
      source: source.name,
      destination: DELETION_DESTINATION,
      messageId: message.messageId!,
      type: 'delete',
      json: JSON.stringify(message),
    })
  }
  outbox.enqueue(deliveries)
  return deliveries.map((d) => d.source)
}
