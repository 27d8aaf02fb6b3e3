import type { DeleteMessage, DeliverableMessage, JsonObject, Message } from '../shared/message'
import { toUtcTimestamp } from '../shared/timestamp'
import { describe, findWireMessageProblem, isPlainObject } from '../shared/validate'
import { WebhookMessageError } from './errors'

/** The JSON body of one webhook request: a plain object, ready for `JSON.stringify`. */
export type WebhookBody = Record<string, unknown>

/**
 * The body the Webhooks destination POSTs for `message`, in the platform's shape:
 *
 * | type | body |
 * |---|---|
 * | page | `version: 1, type, userId, properties, timestamp` |
 * | screen | `version: 1, type, userId, name, context, timestamp` |
 * | identify | `version: 1, type, userId, traits, timestamp` |
 * | track | `version: 1, type, userId, event, properties, timestamp` |
 * | alias | `version: 1, type, "Previous ID", "User ID", timestamp` |
 * | group | `version: 1, type, userId, groupId, traits, timestamp` |
 * | delete | `type, userId, timestamp` — nothing else |
 *
 * Every type but delete also carries the message's whole `context`, its `anonymousId`, its
 * `messageId` and its `receivedAt` (when the relay took it in) where present; `integrations`
 * (routing flags) are never forwarded, nor are a page's `name` and `category` or a screen's
 * `category` and `properties`: they are not in the platform's table. `timestamp` is
 * normalised to ISO 8601 UTC with milliseconds. Nested objects are the message's own, not copies.
 *
 * @throws {WebhookMessageError} for an unknown type, a missing required field or a timestamp
 * that names no instant.
 */
export function formatMessage(message: DeliverableMessage): WebhookBody {
  // Typed callers cannot pass anything else, but the relay's messages come off the wire and disk.
  const fields: unknown = message
  if (!isPlainObject(fields)) throw new WebhookMessageError(`a message must be an object, got ${describe(fields)}`)
  const timestamp = toUtcTimestamp(fields['timestamp'])
  if (timestamp === undefined) {
    throw new WebhookMessageError(
      `timestamp must be an ISO 8601 string with a time zone, got ${describe(fields['timestamp'])}`,
    )
  }
  if (fields['type'] === 'delete') return formatDelete(message as DeleteMessage, timestamp)

  const problem = findWireMessageProblem(message)
  if (problem !== undefined) throw new WebhookMessageError(problem)
  return formatCall(message as Message, timestamp)
}

function formatDelete(message: DeleteMessage, timestamp: string): WebhookBody {
  if (typeof message.userId !== 'string' || message.userId === '') {
    throw new WebhookMessageError(`a delete message needs userId, got ${describe(message.userId)}`)
  }
  return { type: 'delete', userId: message.userId, timestamp }
}

function formatCall(message: Message, timestamp: string): WebhookBody {
  const body: WebhookBody = { version: 1, type: message.type }
  switch (message.type) {
    // Exactly the platform's fields per type: a page's name and category, a screen's category and
    // properties are not in its table, and receivers written against it compare whole bodies.
    case 'page':
      assign(body, { userId: message.userId })
      body['properties'] = objectOrEmpty(message.properties)
      break
    case 'screen':
      assign(body, { userId: message.userId, name: message.name })
      body['context'] = objectOrEmpty(message.context)
      break
    case 'identify':
      assign(body, { userId: message.userId })
      body['traits'] = objectOrEmpty(message.traits)
      break
    case 'track':
      assign(body, { userId: message.userId, event: message.event })
      body['properties'] = objectOrEmpty(message.properties)
      break
    case 'alias':
      // The platform's keys, literally, with a space.
      assign(body, { 'Previous ID': message.previousId, 'User ID': message.userId })
      break
    case 'group':
      assign(body, { userId: message.userId, groupId: message.groupId })
      body['traits'] = objectOrEmpty(message.traits)
      break
  }
  assign(body, {
    timestamp,
    context: message.context,
    anonymousId: message.anonymousId,
    messageId: message.messageId,
    receivedAt: toUtcTimestamp((message as { receivedAt?: unknown }).receivedAt),
  })
  return body
}

/** Copies the fields that are present (not `undefined`) and not already set. */
function assign(body: WebhookBody, fields: Record<string, unknown>): void {
  for (const [key, value] of Object.entries(fields)) {
    if (value !== undefined && !(key in body)) body[key] = value
  }
}

// The table promises these objects on their types; an absent one is sent as `{}`, not left out.
function objectOrEmpty(value: JsonObject | undefined): JsonObject {
  return value ?? {}
}
