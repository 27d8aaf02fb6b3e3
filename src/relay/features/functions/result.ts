import { FUNCTION_ERROR_BYTES, FUNCTION_LOG_BYTES, FUNCTION_LOG_LINES } from '../../config/function-limits'
import { MAX_MESSAGE_BYTES } from '../../../shared/limits'
import { utf8Length } from '../../../shared/utf8'

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

// The caps below are the relay's, applied to what the sandbox answered: the sandbox keeps to them
// too, but code in it can change anything it shares with the prelude (JSON.stringify, say), so
// nothing it says is trusted to be within them.

/**
 * The console lines of a call as kept: at most {@link FUNCTION_LOG_LINES} lines and
 * {@link FUNCTION_LOG_BYTES} bytes; the line that crosses the byte cap is cut there, not dropped.
 */
export function cappedLogs(lines: unknown, truncated: boolean): { logs: string[]; logsTruncated: boolean } {
  const logs: string[] = []
  let bytes = 0
  let logsTruncated = truncated
  for (const item of Array.isArray(lines) ? lines : []) {
    if (logs.length === FUNCTION_LOG_LINES || bytes >= FUNCTION_LOG_BYTES) {
      logsTruncated = true
      break
    }
    const line = cutToBytes(String(item), FUNCTION_LOG_BYTES - bytes)
    if (line.length < String(item).length) logsTruncated = true
    logs.push(line)
    bytes += utf8Length(line)
  }
  return { logs, logsTruncated }
}

/**
 * An error's message or stack as kept: at most {@link FUNCTION_ERROR_BYTES}, and a note saying how
 * much was cut (the sandbox cuts first, with its own note, which this lets through).
 */
export function cappedErrorText(text: string): string {
  const allowed = FUNCTION_ERROR_BYTES + CUT_NOTE_BYTES
  if (text.length * 3 <= allowed) return text
  const bytes = utf8Length(text)
  if (bytes <= allowed) return text
  return `${cutToBytes(text, FUNCTION_ERROR_BYTES)}… (${bytes - FUNCTION_ERROR_BYTES} more bytes cut)`
}
// Room for the note a cut text ends with: `… (4999999 more characters cut)`.
const CUT_NOTE_BYTES = 64

/**
 * Why the event a function returned (its JSON) cannot be sent on: larger than a message may be
 * ({@link MAX_MESSAGE_BYTES}, as ingest refuses one). `undefined` when it fits.
 */
export function oversizedOutput(json: string): string | undefined {
  if (json.length <= MAX_MESSAGE_BYTES / 3) return undefined
  const bytes = utf8Length(json)
  if (bytes <= MAX_MESSAGE_BYTES) return undefined
  return `the function returned an event of ${bytes} bytes, more than a message may be (${MAX_MESSAGE_BYTES})`
}

/** `text` cut to at most `bytes` UTF-8 bytes, never inside a character. */
export function cutToBytes(text: string, bytes: number): string {
  if (text.length * 3 <= bytes) return text
  const cut = Buffer.from(text, 'utf8').subarray(0, Math.max(0, bytes)).toString('utf8')
  // A character cut in two decodes as U+FFFD: drop it.
  return cut.endsWith('\uFFFD') && !text.startsWith(cut) ? cut.slice(0, -1) : cut
}
