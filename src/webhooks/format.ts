import {
  type DeleteMessage,
  type DeliverableMessage,
  type JsonObject,
  MESSAGE_TYPES,
  type Message,
  type MessageType,
} from '../shared/message'
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
  return format(message, findWireMessageProblem)
}

/**
 * {@link formatMessage} for a message the relay validated when it took it in and kept since (its
 * outbox): the body is the same, but the message's fields are not checked again — only what the
 * formatting itself stands on (an object, a known type, a timestamp naming an instant, a delete's
 * userId), so a stored message that still cannot be formatted is refused as clearly.
 *
 * @throws {WebhookMessageError} when the message cannot be formatted.
 */
export function formatStoredMessage(message: DeliverableMessage): WebhookBody {
  return format(message, unknownTypeProblem)
}

// Both formats: `problemOf` is what a message other than a delete is checked for before its body is built.
function format(message: DeliverableMessage, problemOf: (message: unknown) => string | undefined): WebhookBody {
  // Typed callers cannot pass anything else, but the relay's messages come off the wire and disk.
  const fields: unknown = message
  if (!isPlainObject(fields)) throw new WebhookMessageError(`a message must be an object, got ${describe(fields)}`)
  const timestamp = timestampOf(fields)
  if (fields['type'] === 'delete') return formatDelete(message as DeleteMessage, timestamp)
  const problem = problemOf(message)
  if (problem !== undefined) throw new WebhookMessageError(problem)
  return formatCall(message as Message, timestamp)
}

// The one check a stored message gets: a type formatCall knows (the wire rules name the problem).
function unknownTypeProblem(message: unknown): string | undefined {
  const type = (message as { type?: unknown }).type
  return MESSAGE_TYPES.includes(type as MessageType) ? undefined : findWireMessageProblem(message)
}

function timestampOf(fields: Record<string, unknown>): string {
  const timestamp = toUtcTimestamp(fields['timestamp'])
  if (timestamp === undefined) {
    throw new WebhookMessageError(
      `timestamp must be an ISO 8601 string with a time zone, got ${describe(fields['timestamp'])}`,
    )
  }
  return timestamp
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
      put(body, 'userId', message.userId)
      body['properties'] = objectOrEmpty(message.properties)
      break
    case 'screen':
      put(body, 'userId', message.userId)
      put(body, 'name', message.name)
      body['context'] = objectOrEmpty(message.context)
      break
    case 'identify':
      put(body, 'userId', message.userId)
      body['traits'] = objectOrEmpty(message.traits)
      break
    case 'track':
      put(body, 'userId', message.userId)
      put(body, 'event', message.event)
      body['properties'] = objectOrEmpty(message.properties)
      break
    case 'alias':
      // The platform's keys, literally, with a space.
      put(body, 'Previous ID', message.previousId)
      put(body, 'User ID', message.userId)
      break
    case 'group':
      put(body, 'userId', message.userId)
      put(body, 'groupId', message.groupId)
      body['traits'] = objectOrEmpty(message.traits)
      break
  }
  put(body, 'timestamp', timestamp)
  put(body, 'context', message.context)
  put(body, 'anonymousId', message.anonymousId)
  put(body, 'messageId', message.messageId)
  put(body, 'receivedAt', toUtcTimestamp((message as { receivedAt?: unknown }).receivedAt))
  return body
}

/** Sets a field that is present (not `undefined`) and not already set. */
function put(body: WebhookBody, key: string, value: unknown): void {
  if (value !== undefined && !(key in body)) body[key] = value
}

// The table promises these objects on their types; an absent one is sent as `{}`, not left out.
function objectOrEmpty(value: JsonObject | undefined): JsonObject {
  return value ?? {}
}
