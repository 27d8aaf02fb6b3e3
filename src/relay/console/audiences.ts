import { randomUUID } from 'node:crypto'
import type { RoutedSource } from '../config/sources'
import type { AudienceChange, NewDelivery, Store } from '../store/store'

/**
 * The trait an audience sets on its members: the audience name in snake_case
 * (`High Value Users` and `highValueUsers` both give `high_value_users`).
 */
export function snakeCase(name: string): string {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1_$2')
    .replace(/[^A-Za-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .toLowerCase()
}

/**
 * Makes `userIds` the audience's members for `source` and queues, in the same transaction, one
 * `identify` per user whose membership changed, with the trait `snake_case(audience)` set to
 * `true` (joined) or `false` (left). The first sync finds no members, so every member is sent.
 */
export function syncAudience(
  store: Store,
  source: RoutedSource,
  audience: string,
  userIds: readonly string[],
): Promise<AudienceChange> {
  const trait = snakeCase(audience)
  return store.syncAudience(source.name, audience, userIds, ({ added, removed }) => {
    const timestamp = new Date().toISOString()
    const deliveries: NewDelivery[] = []
    const announce = (userId: string, member: boolean): void => {
      const message = { type: 'identify', userId, messageId: randomUUID(), timestamp, traits: { [trait]: member } }
      const json = JSON.stringify(message)
      for (const destination of source.destinations) {
        deliveries.push({ source: source.name, destination, messageId: message.messageId, type: 'identify', json })
      }
    }
    for (const id of added) announce(id, true)
    for (const id of removed) announce(id, false)
    return deliveries
  })
}
