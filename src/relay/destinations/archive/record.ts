import { storedJson } from '../../kit/stored-json'
import type { OutboundMessage } from './types'

/** One line or row of an archive file: the stored message with its `messageId` and `receivedAt`. */
export type ArchiveRecord = Record<string, unknown> & { messageId: string; receivedAt: string }

/** The record a message is archived as (its `receivedAt` the relay's, whatever the message says). */
export function archiveRecord({ message, receivedAt, deliveryId }: OutboundMessage): ArchiveRecord {
  // A delete message may come without a messageId: the delivery's id keeps the record addressable.
  const messageId = message.messageId ?? `delivery-${deliveryId}`
  return { ...message, messageId, receivedAt }
}

/**
 * The record's JSON text, as `JSON.stringify(archiveRecord(one))` gives it, with no copy of the
 * message where none is needed (the copy was a tenth of the archive's CPU per message): a stored
 * message already carries its `messageId` and the relay's `receivedAt`, and its stored text, when
 * the store's claim parsed this very object, is that JSON already.
 */
export function archiveLine(one: OutboundMessage): string {
  const { message } = one
  const own = (message as { receivedAt?: unknown }).receivedAt
  if (message.messageId !== undefined && own === one.receivedAt) return storedJson(message) ?? JSON.stringify(message)
  if (message.messageId === undefined || Object.hasOwn(message, 'receivedAt')) {
    return JSON.stringify(archiveRecord(one))
  }
  const json = JSON.stringify(message)
  const receivedAt = JSON.stringify(one.receivedAt)
  return json === '{}' ? `{"receivedAt":${receivedAt}}` : `${json.slice(0, -1)},"receivedAt":${receivedAt}}`
}
