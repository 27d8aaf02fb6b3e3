import type { OutboundMessage } from './types'

/** One line or row of an archive file: the stored message with its `messageId` and `receivedAt`. */
export type ArchiveRecord = Record<string, unknown> & { messageId: string; receivedAt: string }

/** The record a message is archived as (its `receivedAt` the relay's, whatever the message says). */
export function archiveRecord({ message, receivedAt, deliveryId }: OutboundMessage): ArchiveRecord {
  // A delete message may come without a messageId: the delivery's id keeps the record addressable.
  const messageId = message.messageId ?? `delivery-${deliveryId}`
  return { ...message, messageId, receivedAt }
}
