import type { DeliverableMessage, Message } from '../../../src/shared/message'
import { parseWarehouseSettings } from '../../../src/relay/destinations/warehouse/settings'
import { createWarehouseSender, type WarehouseSender } from '../../../src/relay/destinations/warehouse/sender'
import type { OutboundMessage } from '../../../src/relay/destinations/warehouse/types'

let next = 0

/** A message of `type` with a fresh `messageId` and fixed times; `fields` override. */
export function message(type: Message['type'], fields: Partial<Message> = {}): Message {
  next += 1
  return {
    type,
    messageId: `m-${process.pid}-${next}`,
    timestamp: '2026-01-02T03:04:05.678Z',
    userId: 'u1',
    ...fields,
  } as Message
}

/**
 * `messages` as a batch handed to the warehouse, each stamped as ingest stamps them
 * (`receivedAt`), with the client's `sentAt`.
 */
export function outbound(messages: readonly DeliverableMessage[], source = 'web'): OutboundMessage[] {
  return messages.map((message, index) => ({
    deliveryId: index + 1,
    source,
    message: { receivedAt: '2026-01-02T03:04:06.000Z', sentAt: '2026-01-02T03:04:05.900Z', ...message },
  }))
}

/** A warehouse sender for `source` loading into `url` (`schema` default: the source's). */
export function warehouse(url: string, source = 'web', extra: Record<string, unknown> = {}): WarehouseSender {
  const settings = parseWarehouseSettings({ url, ...extra }, 'Warehouse')
  return createWarehouseSender(settings, { source })
}
