import { mergeIntegrations } from '../shared/integrations'
import type { Integrations, Message, MessageType, ObjectFields, ParamsByType } from '../shared/message'
import { toUtcTimestamp } from '../shared/timestamp'
import { LIBRARY_NAME, LIBRARY_VERSION } from '../shared/version'
import { newMessageId } from './platform/runtime'

const LIBRARY = Object.freeze({ name: LIBRARY_NAME, version: LIBRARY_VERSION })

/**
 * The message a call sends, from fields already validated by `findMessageProblem`: its `type`,
 * a `messageId` (a UUID unless given), an ISO 8601 UTC `timestamp` with milliseconds (the given
 * instant for a historical import, else now), `context.library` merged into the given context,
 * and the call's `integrations` merged over the client's defaults.
 *
 * Nested objects are shared with the caller's: the snapshot is the JSON serialised right after.
 */
export function normalizeMessage<T extends MessageType>(
  type: T,
  params: ParamsByType[T],
  defaultIntegrations: Integrations | undefined,
  defaultContext?: ObjectFields | undefined,
): Message {
  // `type` leads the literal: V8 builds `{ type, ...params, … }` on its fast path, while
  // `{ ...params, type, … }` takes a slow one that doubles the cost of a call. The cast: an
  // optional field given as `undefined` is as good as absent, since the message goes out as JSON.
  const message = {
    type,
    ...params,
    messageId: params.messageId ?? newMessageId(),
    timestamp:
      (params.timestamp === undefined ? undefined : toUtcTimestamp(params.timestamp)) ?? new Date().toISOString(),
    context: mergeContext(defaultContext, params.context),
  } as Message
  // The caller's fields may carry a `type` of their own; the call's wins.
  message.type = type
  const integrations = mergeIntegrations(defaultIntegrations, params.integrations)
  // An `integrations: undefined` given by the caller is dropped by JSON.stringify anyway.
  if (integrations !== undefined) message.integrations = integrations
  return message
}

/**
 * The client's `context` option under the call's own (the call's top-level keys win), and
 * `context.library` over both.
 */
function mergeContext(client: ObjectFields | undefined, call: ObjectFields | undefined): ObjectFields {
  if (client === undefined) return call === undefined ? { library: LIBRARY } : { ...call, library: LIBRARY }
  return { ...client, ...call, library: LIBRARY }
}

/** The id fields a number is accepted for, as the classic `analytics-node` accepted it. */
const ID_FIELDS = ['userId', 'anonymousId', 'groupId', 'previousId'] as const

/**
 * The call's fields with each finite number among its ids turned into its decimal string
 * (`42` → `"42"`) and each `String` object into its string, as Segment's classic library sends
 * them; a shallow copy only when there is one. Other non-strings are left for validation to refuse.
 */
export function withStringIds<P>(params: P): P {
  if (typeof params !== 'object' || params === null) return params
  let copy: Record<string, unknown> | undefined
  for (const key of ID_FIELDS) {
    const value: unknown = (params as Record<string, unknown>)[key]
    if (typeof value === 'number' && Number.isFinite(value)) {
      copy ??= { ...(params as Record<string, unknown>) }
      copy[key] = decimal(value)
    } else if (value instanceof String) {
      // `new String('42')`: classic analytics-node sends it as its string, and so does this client.
      copy ??= { ...(params as Record<string, unknown>) }
      copy[key] = value.valueOf()
    }
  }
  return (copy ?? params) as P
}

// `String(1e21)` is "1e+21": integers that large are written out in full instead.
function decimal(value: number): string {
  return Number.isInteger(value) && Math.abs(value) >= 1e21 ? BigInt(value).toString() : String(value)
}
