/**
 * What one call of a function came to. `pass` (no handler for the type) and `event` both send the
 * event on; `drop` ends the delivery as `filtered`; `retry` (a `RetryError`) is a retryable
 * failure; `error` dead-letters the delivery, with `code` for a timeout or the memory limit.
 */
export type FunctionResult = { logs: readonly string[]; logsTruncated: boolean; ms: number } & (
  | { kind: 'pass' }
  | { kind: 'event'; event: Record<string, unknown> }
  | { kind: 'drop' }
  | { kind: 'retry'; message: string }
  | { kind: 'error'; message: string; code?: string; stack?: string }
)

/** The outcome label of a call in the metrics (`tracklet_function_calls_total{outcome}`). */
export type FunctionOutcome = 'sent' | 'dropped' | 'retry' | 'error' | 'timeout' | 'memory'

/** The metrics label of `result`. */
export function outcomeLabel(result: FunctionResult): FunctionOutcome {
  switch (result.kind) {
    case 'pass':
    case 'event':
      return 'sent'
    case 'drop':
      return 'dropped'
    case 'retry':
      return 'retry'
    case 'error':
      return result.code === 'ERR_FUNCTION_TIMEOUT'
        ? 'timeout'
        : result.code === 'ERR_FUNCTION_MEMORY'
          ? 'memory'
          : 'error'
  }
}
