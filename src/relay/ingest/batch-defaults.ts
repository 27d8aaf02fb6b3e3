import { mergeIntegrations } from '../../shared/integrations'
import type { Integrations } from '../../shared/message'
import { describe, findIntegrationsProblem, isPlainObject } from '../../shared/validate'
import { HttpError } from '../http/http-error'

/**
 * A batch's messages with the batch's own `context` and `integrations` merged into each, as the
 * tracking API does. analytics-go puts `context.library` and its default context only there, so
 * without this they would never reach a destination.
 *
 * The message's keys win: its `context` keys over the batch's (`library` included), its
 * `integrations` flags over the batch's (see {@link mergeIntegrations}, which also reads
 * analytics-go v3's lower-case `all`). A message that is not an object, or whose own `context` or
 * `integrations` is not one, is left as it is, for validation to refuse on its own. Pure: the
 * messages given are never changed.
 *
 * @throws {HttpError} 400 `ERR_INVALID_BODY` when the batch's `context` or `integrations` is not
 * an object of the right shape: it applies to every message, so no message can be taken without it.
 */
export function withBatchDefaults(messages: readonly unknown[], body: Record<string, unknown>): unknown[] {
  const context = batchContext(body['context'])
  const integrations = batchIntegrations(body['integrations'])
  if (context === undefined && integrations === undefined) return messages as unknown[]
  return messages.map((message) => {
    if (!isPlainObject(message)) return message
    const merged: Record<string, unknown> = { ...message }
    if (context !== undefined) {
      const own = message['context']
      if (own === undefined) merged['context'] = { ...context }
      else if (isPlainObject(own)) merged['context'] = { ...context, ...own }
    }
    if (integrations !== undefined) {
      const own = message['integrations']
      if (own === undefined || isPlainObject(own)) {
        merged['integrations'] = mergeIntegrations(integrations, own as Integrations | undefined)
      }
    }
    return merged
  })
}

function batchContext(value: unknown): Record<string, unknown> | undefined {
  if (value === undefined || value === null) return undefined
  if (!isPlainObject(value)) {
    throw new HttpError(400, 'ERR_INVALID_BODY', `the batch's context must be an object, got ${describe(value)}`)
  }
  return value
}

function batchIntegrations(value: unknown): Integrations | undefined {
  if (value === undefined || value === null) return undefined
  const problem = findIntegrationsProblem(value)
  if (problem !== undefined) throw new HttpError(400, 'ERR_INVALID_BODY', `the batch's ${problem}`)
  return value as Integrations
}
