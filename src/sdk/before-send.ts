import { type Serialized, serialize } from '../shared/json'
import type { Message, MessageType } from '../shared/message'
import { describe, findMessageProblem, isPlainObject } from '../shared/validate'
import { InvalidMessageError } from './errors'

/** What `beforeSend` made of a message. */
export type BeforeSendOutcome =
  | { kind: 'send'; message: Message; serialized: Serialized & { ok: true } }
  | { kind: 'dropped'; message: Message }
  | { kind: 'invalid'; error: InvalidMessageError }

/**
 * Runs the `beforeSend` hook on a copy of the message as it would be sent (parsed from its JSON,
 * so the hook can change it freely without touching the caller's objects), and checks what it
 * returns as a call is checked: the same type, valid fields, serialisable. The size check is the
 * caller's, on the bytes returned here.
 */
export function runBeforeSend(
  hook: (message: Message) => Message | null | undefined,
  type: MessageType,
  json: string,
): BeforeSendOutcome {
  const draft = JSON.parse(json) as Message
  let returned: unknown
  try {
    returned = hook(draft)
  } catch (cause) {
    const why = cause instanceof Error ? cause.message : String(cause)
    return invalid(`beforeSend threw: ${why}`, JSON.parse(json) as Message, cause)
  }
  if (returned === null || returned === undefined) return { kind: 'dropped', message: draft }
  if (!isPlainObject(returned)) {
    return invalid(`beforeSend must return a message, null or undefined, got ${describe(returned)}`, draft)
  }
  const message = returned as unknown as Message
  if (message.type !== type) {
    return invalid(`beforeSend changed the message's type from ${type} to ${describe(message.type)}`, draft)
  }
  const problem = findMessageProblem(type, message)
  if (problem !== undefined) return invalid(`after beforeSend: ${problem}`, message)
  const serialized = serialize(message)
  if (!serialized.ok) return invalid(`after beforeSend: ${serialized.problem}`, message)
  return { kind: 'send', message, serialized }
}

function invalid(problem: string, message: Message, cause?: unknown): BeforeSendOutcome {
  return { kind: 'invalid', error: new InvalidMessageError(problem, { analyticsMessage: message, cause }) }
}
