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
 * The record's JSON text, as `JSON.stringify(archiveRecord(one))` gives it. Most messages already
 * have a `messageId` and no `receivedAt`: their text is the message's with `receivedAt` appended,
 * with no copy of the message (the copy was a tenth of the archive's CPU per message).
 */
export function archiveLine(one: OutboundMessage): string {
  const { message } = one
  if (message.messageId === undefined || Object.hasOwn(message, 'receivedAt')) {
    return JSON.stringify(archiveRecord(one))
  }
  const json = JSON.stringify(message)
  const receivedAt = JSON.stringify(one.receivedAt)
  return json === '{}' ? `{"receivedAt":${receivedAt}}` : `${json.slice(0, -1)},"receivedAt":${receivedAt}}`
}
