import { randomUUID } from 'node:crypto'
import type Database from 'better-sqlite3'
import type { RelayDatabase } from './database'
import type { IngestSource } from './ingest'
import type { NewDelivery, Outbox } from './outbox'

/** What an audience sync changed: the user ids that joined and that left. */
export interface AudienceChange {
  added: string[]
  removed: string[]
}

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

/** Audience memberships, kept in SQLite beside the outbox. */
export class Audiences {
  readonly #outbox: Outbox
  readonly #members: Database.Statement
  readonly #add: Database.Statement
  readonly #remove: Database.Statement
  readonly #syncAll: (source: IngestSource, audience: string, userIds: readonly string[]) => AudienceChange

  constructor(db: RelayDatabase, outbox: Outbox) {
    this.#outbox = outbox
    this.#members = db.prepare('SELECT user_id FROM audience_members WHERE source = ? AND audience = ?').pluck()
    this.#add = db.prepare('INSERT INTO audience_members (source, audience, user_id) VALUES (?, ?, ?)')
    this.#remove = db.prepare('DELETE FROM audience_members WHERE source = ? AND audience = ? AND user_id = ?')
    this.#syncAll = db.transaction((source, audience, userIds) => this.#apply(source, audience, userIds))
  }

  /**
   * Makes `userIds` the audience's members for `source` and queues, in the same transaction, one
   * `identify` per user whose membership changed, with the trait `snake_case(audience)` set to
   * `true` (joined) or `false` (left). The first sync finds no members, so every member is sent.
   */
  sync(source: IngestSource, audience: string, userIds: readonly string[]): AudienceChange {
    return this.#syncAll(source, audience, userIds)
  }

  #apply(source: IngestSource, audience: string, userIds: readonly string[]): AudienceChange {
    const current = new Set(this.#members.all(source.name, audience) as string[])
    const wanted = new Set(userIds)
    const added = [...wanted].filter((id) => !current.has(id))
    const removed = [...current].filter((id) => !wanted.has(id))
    for (const id of added) this.#add.run(source.name, audience, id)
    for (const id of removed) this.#remove.run(source.name, audience, id)

    const trait = snakeCase(audience)
    const timestamp = new Date().toISOString()
    const deliveries: NewDelivery[] = []
    const queue = (userId: string, member: boolean): void => {
      const message = { type: 'identify', userId, messageId: randomUUID(), timestamp, traits: { [trait]: member } }
      for (const destination of source.destinations) {
        deliveries.push({
          source: source.name,
          destination,
          messageId: message.messageId,
          type: 'identify',
          json: JSON.stringify(message),
        })
      }
    }
    for (const id of added) queue(id, true)
    for (const id of removed) queue(id, false)
    this.#outbox.enqueue(deliveries)
    return { added, removed }
  }
}
