import { randomUUID } from 'node:crypto'
import { mergeIntegrations } from '../shared/integrations'
import type { Integrations, Message, MessageType, ParamsByType } from '../shared/message'
import { toUtcTimestamp } from '../shared/timestamp'
import { LIBRARY_NAME, LIBRARY_VERSION } from '../shared/version'

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
): Message {
  // `type` leads the literal: V8 builds `{ type, ...params, … }` on its fast path, while
  // `{ ...params, type, … }` takes a slow one that doubles the cost of a call.
  const message: Message = {
    type,
    ...params,
    messageId: params.messageId ?? randomUUID(),
    timestamp:
      (params.timestamp === undefined ? undefined : toUtcTimestamp(params.timestamp)) ?? new Date().toISOString(),
    context: params.context === undefined ? { library: LIBRARY } : { ...params.context, library: LIBRARY },
  }
  // The caller's fields may carry a `type` of their own; the call's wins.
  message.type = type
  const integrations = mergeIntegrations(defaultIntegrations, params.integrations)
  // An `integrations: undefined` given by the caller is dropped by JSON.stringify anyway.
  if (integrations !== undefined) message.integrations = integrations
  return message
}
