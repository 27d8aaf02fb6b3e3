import { ERR_FUNCTION_MEMORY, ERR_FUNCTION_TIMEOUT } from '../../config/function-limits'
import { cappedErrorText, cappedLogs, type FunctionResult, oversizedOutput } from './result'

// What a function's worker answers for one call, as the relay keeps it. The worker's text is the
// sandbox's reply JSON, then, for an event sent on, a newline and the event's JSON (a reply never
// holds a raw newline): the event is encoded once, in the sandbox, and parsed once, here.

type Reply = Record<string, unknown> & { kind: string; logs?: string[]; logsTruncated?: boolean }

/** The result of one call from its reply's text and how long it ran (ms), every cap applied. */
export function resultOf(text: string, ms: number, timeoutMs: number, memoryMb: number): FunctionResult {
  return quietResult(text, ms) ?? toResult(parseReply(text), ms, timeoutMs, memoryMb)
}

/** The error message of a call that ran past `functionTimeout`. */
export function timeoutMessage(timeoutMs: number): string {
  return `the function ran past functionTimeout (${timeoutMs} ms)`
}

// The replies of most calls, which logged nothing: read without a parse of their JSON (the sandbox
// writes them as these constants).
const QUIET_EVENT = '{"kind":"event"}\n'
function quietResult(text: string, ms: number): FunctionResult | undefined {
  if (text.startsWith(QUIET_EVENT)) {
    const json = text.slice(QUIET_EVENT.length)
    const event = oversizedOutput(json) === undefined ? parseEvent(json) : undefined
    return event === undefined ? undefined : { kind: 'event', event, ...QUIET, ms }
  }
  if (text === '{"kind":"pass"}') return { kind: 'pass', ...QUIET, ms }
  if (text === '{"kind":"drop"}') return { kind: 'drop', ...QUIET, ms }
  return undefined
}

// The event a call returned; undefined when its JSON does not read as an object (it always should:
// the sandbox's own JSON.stringify wrote it).
function parseEvent(json: string): Record<string, unknown> | undefined {
  try {
    const event: unknown = JSON.parse(json)
    return event !== null && typeof event === 'object' && !Array.isArray(event)
      ? (event as Record<string, unknown>)
      : undefined
  } catch {
    return undefined
  }
}

// The reply's JSON, with the event's JSON apart (json) when it sends one on.
function parseReply(text: string): Reply {
  const cut = text.indexOf('\n')
  try {
    if (cut < 0) return JSON.parse(text) as Reply
    const reply = JSON.parse(text.slice(0, cut)) as Reply
    reply['json'] = text.slice(cut + 1)
    return reply
  } catch {
    return { kind: 'error', message: 'the sandbox answered a reply the relay cannot read' }
  }
}

// The reply as the relay keeps it: every cap applied here, whatever the sandbox said (result.ts).
function toResult(reply: Reply, ms: number, timeoutMs: number, memoryMb: number): FunctionResult {
  const base = {
    ...(reply.logs === undefined && reply.logsTruncated === undefined
      ? QUIET
      : cappedLogs(reply.logs, reply.logsTruncated === true)),
    ms,
  }
  switch (reply.kind) {
    case 'pass':
      return { ...base, kind: 'pass' }
    case 'drop':
      return { ...base, kind: 'drop' }
    case 'event': {
      const json = String(reply.json)
      const oversized = oversizedOutput(json)
      if (oversized !== undefined) return { ...base, kind: 'error', message: oversized }
      const event = parseEvent(json)
      if (event === undefined)
        return { ...base, kind: 'error', message: 'the function returned an event the relay cannot read' }
      return { ...base, kind: 'event', event }
    }
    case 'retry':
      return { ...base, kind: 'retry', message: cappedErrorText(String(reply.message)) }
    default: {
      if (reply.code === 'timeout')
        return { ...base, kind: 'error', code: ERR_FUNCTION_TIMEOUT, message: timeoutMessage(timeoutMs) }
      if (reply.code === 'memory') {
        return {
          ...base,
          kind: 'error',
          code: ERR_FUNCTION_MEMORY,
          message: `the function ran out of memory (functionMemory ${memoryMb} MB)`,
        }
      }
      const stack = typeof reply.stack === 'string' && reply.stack !== '' ? { stack: cappedErrorText(reply.stack) } : {}
      return { ...base, kind: 'error', message: cappedErrorText(String(reply.message)), ...stack }
    }
  }
}

// The console of a call that logged nothing (the sandbox then leaves logs out of its reply).
const QUIET: { logs: readonly string[]; logsTruncated: false } = Object.freeze({
  logs: Object.freeze([]) as readonly string[],
  logsTruncated: false,
})
