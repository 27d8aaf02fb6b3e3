import { MESSAGE_TYPES, type MessageType } from './message'
import { isIsoTimestamp } from './timestamp'

/** A plain object (`{}` or `Object.create(null)`), not an array, a Date or a class instance. */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false
  const proto = Object.getPrototypeOf(value)
  return proto === Object.prototype || proto === null
}

/** Whether `value` is a string with at least one character. */
export function isNonEmptyString(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0
}

const OBJECT_FIELDS = ['traits', 'properties', 'context'] as const
const STRING_FIELDS = ['name', 'category'] as const

/**
 * What is wrong with the fields of a `type` call, as a sentence naming the field, or `undefined`
 * when they are valid. The rules are the Go library's: every call needs `userId` or
 * `anonymousId`; `track` needs `event`; `group` needs `groupId`; `alias` needs `userId` and
 * `previousId`. Shared by the SDK (at the call) and the relay (per message of a batch).
 */
export function findMessageProblem(type: MessageType, fields: unknown): string | undefined {
  if (!isPlainObject(fields)) return `a ${type} call takes an object of fields, got ${describe(fields)}`

  for (const key of ['userId', 'anonymousId', 'previousId', 'event', 'groupId', 'messageId'] as const) {
    if (fields[key] !== undefined && !isNonEmptyString(fields[key])) {
      return `${key} must be a non-empty string, got ${describe(fields[key])}`
    }
  }
  if (type === 'alias') {
    if (fields['userId'] === undefined) return 'alias needs userId'
    if (fields['previousId'] === undefined) return 'alias needs previousId'
  } else if (fields['userId'] === undefined && fields['anonymousId'] === undefined) {
    return `${type} needs userId or anonymousId`
  }
  if (type === 'track' && fields['event'] === undefined) return 'track needs event'
  if (type === 'group' && fields['groupId'] === undefined) return 'group needs groupId'

  for (const key of STRING_FIELDS) {
    if (fields[key] !== undefined && typeof fields[key] !== 'string') {
      return `${key} must be a string, got ${describe(fields[key])}`
    }
  }
  for (const key of OBJECT_FIELDS) {
    if (fields[key] !== undefined && !isPlainObject(fields[key])) {
      return `${key} must be an object, got ${describe(fields[key])}`
    }
  }
  return findTimestampProblem(fields['timestamp']) ?? findIntegrationsProblem(fields['integrations'])
}

/**
 * What is wrong with a message received on the wire (it names its own `type`), or `undefined`.
 */
export function findWireMessageProblem(message: unknown): string | undefined {
  if (!isPlainObject(message)) return `a message must be an object, got ${describe(message)}`
  const type = message['type']
  if (!MESSAGE_TYPES.includes(type as MessageType)) {
    return `type must be one of ${MESSAGE_TYPES.join(', ')}, got ${describe(type)}`
  }
  return findMessageProblem(type as MessageType, message)
}

function findTimestampProblem(timestamp: unknown): string | undefined {
  if (timestamp === undefined) return undefined
  if (timestamp instanceof Date) {
    return Number.isNaN(timestamp.getTime()) ? 'timestamp is an invalid Date' : undefined
  }
  if (typeof timestamp === 'string' && isIsoTimestamp(timestamp)) return undefined
  return `timestamp must be a Date or an ISO 8601 string with a time zone, got ${describe(timestamp)}`
}

/**
 * What is wrong with `integrations` flags (an object of `true`, `false` or options objects), or
 * `undefined`. Shared by message validation and the SDK's `integrations` option.
 */
export function findIntegrationsProblem(integrations: unknown): string | undefined {
  if (integrations === undefined) return undefined
  if (!isPlainObject(integrations)) return `integrations must be an object, got ${describe(integrations)}`
  for (const [name, flag] of Object.entries(integrations)) {
    if (typeof flag !== 'boolean' && !isPlainObject(flag)) {
      return `integrations.${name} must be true, false or an object of options, got ${describe(flag)}`
    }
  }
  return undefined
}

/** A short, safe description of a value for an error message (never the whole value). */
export function describe(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'an array'
  if (value instanceof Date) return 'a Date'
  switch (typeof value) {
    case 'string':
      return value.length > 40 ? `"${value.slice(0, 40)}…"` : JSON.stringify(value)
    case 'number':
    case 'boolean':
    case 'bigint':
      return `${typeof value} ${String(value)}`
    case 'undefined':
      return 'undefined'
    case 'object':
      return 'an object'
    default:
      return `a ${typeof value}`
  }
}
