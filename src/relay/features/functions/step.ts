import type { DeliverableMessage } from '../../../shared/message'
import { DROPPED_BY_FUNCTION, FUNCTION_LOG_BYTES, FUNCTION_LOG_LINES } from '../../config/function-limits'
import type { DeliveryStep, StepVerdict } from '../../delivery/delivery-step'
import type { FunctionResult } from './result'

/** A destination's function as the delivery step sees it: one call per attempt. */
export interface FunctionCaller {
  call(message: unknown): Promise<FunctionResult>
}

/**
 * The delivery step of the destinations' functions (source → destination → function). `bySource`
 * is read at each attempt (a reload or the admin API swaps its entries in place), so a route with
 * no function now costs one map look-up.
 */
export function functionStep(bySource: ReadonlyMap<string, ReadonlyMap<string, FunctionCaller>>): DeliveryStep {
  return {
    of(source, destination) {
      const fn = bySource.get(source)?.get(destination)
      return fn === undefined ? undefined : async (message) => verdictOf(await fn.call(message), message)
    },
  }
}

/**
 * What one call means for the delivery: what it returns is sent (keeping the stored `messageId`
 * when the function removed it: the receiver's idempotency key), `null` ends the delivery as
 * filtered, a `RetryError` is a retryable failure and any other error dead-letters it. The call's
 * `console` lines go with the verdict, to be kept with the attempt.
 */
export function verdictOf(result: FunctionResult, message: DeliverableMessage): StepVerdict {
  const logs = consoleLines(result)
  switch (result.kind) {
    case 'pass':
      return { kind: 'send', message, logs }
    case 'event': {
      const event = result.event as Partial<DeliverableMessage>
      return {
        kind: 'send',
        message: { ...event, messageId: event.messageId ?? message.messageId } as DeliverableMessage,
        logs,
      }
    }
    case 'drop':
      return { kind: 'filtered', reason: DROPPED_BY_FUNCTION, logs }
    case 'retry':
      return { kind: 'retry', error: `the function asked for a retry: ${result.message}`, logs }
    case 'error':
      return { kind: 'failed', error: `the function failed: ${errorText(result)}`, logs }
  }
}

/** A failed call's error as shown: its code, if any, then its message. */
export function errorText(result: Extract<FunctionResult, { kind: 'error' }>): string {
  return `${result.code === undefined ? '' : `${result.code}: `}${result.message}`
}

/** The call's console lines as kept, with a last line saying so when some were dropped. */
export function consoleLines({ logs, logsTruncated }: FunctionResult): readonly string[] {
  return logsTruncated
    ? [
        ...logs,
        `… (more console output dropped: ${FUNCTION_LOG_LINES} lines / ${FUNCTION_LOG_BYTES / 1024} KB per call)`,
      ]
    : logs
}
