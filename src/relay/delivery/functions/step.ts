import type { DeliverableMessage } from '../../../shared/message'
import { DROPPED_BY_FUNCTION } from '../../config/function-limits'
import type { FunctionResult } from './result'

/** A destination's function as the delivery step sees it: one call per attempt. */
export interface FunctionCaller {
  call(message: unknown): Promise<FunctionResult>
}

/** What the step before formatting decided: send `message`, or end the attempt here. */
export type FunctionStep =
  | { kind: 'send'; message: DeliverableMessage }
  | { kind: 'filtered'; reason: string }
  | { kind: 'function-retry'; error: string }
  | { kind: 'unsent'; error: string }

/**
 * Runs `fn` on the stored `message` before it is formatted: what it returns is sent (keeping the
 * stored `messageId` when the function removed it: the receiver's idempotency key), `null` ends the
 * delivery as filtered, a `RetryError` is a retryable failure and any other error dead-letters it.
 * The call's `console` lines go with a failure's text, so they are shown with the delivery.
 */
export async function runFunctionStep(fn: FunctionCaller, message: DeliverableMessage): Promise<FunctionStep> {
  const result = await fn.call(message)
  switch (result.kind) {
    case 'pass':
      return { kind: 'send', message }
    case 'event': {
      const event = result.event as Partial<DeliverableMessage>
      return {
        kind: 'send',
        message: { ...event, messageId: event.messageId ?? message.messageId } as DeliverableMessage,
      }
    }
    case 'drop':
      return { kind: 'filtered', reason: DROPPED_BY_FUNCTION }
    case 'retry':
      return { kind: 'function-retry', error: `the function asked for a retry: ${result.message}${logsText(result)}` }
    case 'error':
      return {
        kind: 'unsent',
        error: `the function failed: ${result.code === undefined ? '' : `${result.code}: `}${result.message}${logsText(result)}`,
      }
  }
}

/** The call's console lines, after a failure's message. */
export function logsText({ logs, logsTruncated }: FunctionResult): string {
  if (logs.length === 0 && !logsTruncated) return ''
  return `\nconsole:\n${logs.join('\n')}${logsTruncated ? '\n… (more console output dropped: 20 lines / 4 KB per call)' : ''}`
}
