import { formatWithOptions } from 'node:util'
import createDebug from 'debug'
import { redactUrlsInText } from './ops/redact'

/**
 * The relay's log: one line per event, with every URL cut to origin and path and every secret the
 * running relays were configured with replaced by `[redacted]` — a net under the rule that code
 * never passes a secret here in the first place.
 *
 * Where lines go:
 * - The `tracklet relay` command always writes them to stderr ({@link writeLogTo}), as text, or as
 *   JSON with `LOG_FORMAT=json`.
 * - A program that embeds the relay (`createRelay`) stays quiet unless it asks, as a library
 *   should: `DEBUG=tracklet:relay` writes them through the `debug` package.
 *
 * Call sites use it as they would a `debug` logger: `log('delivery %d of source %s', id, name)`,
 * a message starting with `ERROR` or `WARN` is an event of that level.
 */
export interface RelayLog {
  (format: string, ...args: unknown[]): void
  /** The `debug` logger's switch (set by `DEBUG=tracklet:relay`). */
  enabled: boolean
  /** The `debug` logger's writer, receiving its formatted arguments (tests capture lines with it). */
  log: (...args: unknown[]) => void
}

/** How a line is written: `text` for people, `json` for log pipelines. */
export type LogFormat = 'text' | 'json'

/** An event's severity. */
export type LogLevel = 'info' | 'warn' | 'error'

/** One event of the log, as every sink receives it: already redacted. */
export interface LogEvent {
  /** ISO time. */
  time: string
  level: LogLevel
  msg: string
}

// Secrets shorter than this are not looked for: replacing every "ab" in every line protects
// nothing and garbles the log.
const MIN_SECRET_LENGTH = 4

const debugLog = createDebug('tracklet:relay')
/** Where events go besides `debug` (the CLI's stderr). */
const sinks = new Set<(event: LogEvent) => void>()
/** The secrets of every running relay, each with how many relays hold it. */
const secrets = new Map<string, number>()

function write(format: string, ...args: unknown[]): void {
  if (sinks.size === 0 && !debugLog.enabled) return
  const event = toEvent(formatWithOptions({ colors: false, breakLength: Number.POSITIVE_INFINITY }, format, ...args))
  for (const sink of sinks) sink(event)
  // A program that installed a sink has its lines; DEBUG would only repeat them.
  if (sinks.size === 0) debugLog('%s', oneLine(event.msg))
}

/** The relay's log (see {@link RelayLog}). */
export const log: RelayLog = Object.defineProperties(write as RelayLog, {
  enabled: {
    get: () => debugLog.enabled,
    set: (value: boolean) => {
      debugLog.enabled = value
    },
  },
  log: {
    get: () => debugLog.log,
    set: (writer: (...args: unknown[]) => void) => {
      debugLog.log = writer
    },
  },
})

/**
 * Writes every event from now on to `stream`, one line each, in `format`, until the returned
 * function is called. Used by the `tracklet relay` command.
 */
export function writeLogTo(stream: NodeJS.WritableStream, format: LogFormat): () => void {
  const sink = (event: LogEvent): void => {
    stream.write(
      format === 'json'
        ? `${JSON.stringify(event)}\n`
        : `${event.time} ${event.level.padEnd(5)} ${oneLine(event.msg)}\n`,
    )
  }
  sinks.add(sink)
  return () => {
    sinks.delete(sink)
  }
}

/**
 * The format `LOG_FORMAT` asks for: `text` when unset or empty.
 * @throws {TypeError} for any other value than `text` or `json`, naming it.
 */
export function logFormatFrom(value: string | undefined): LogFormat {
  if (value === undefined || value === '' || value === 'text') return 'text'
  if (value === 'json') return 'json'
  throw new TypeError(`LOG_FORMAT must be text or json, got ${JSON.stringify(value)}`)
}

/**
 * Adds `values` to the secrets every line is cleaned of, until the returned function is called
 * (a relay's write keys, tokens and webhook secrets, for as long as it runs).
 */
export function redactFromLog(values: readonly (string | undefined)[]): () => void {
  const added = values.filter((v): v is string => v !== undefined && v.length >= MIN_SECRET_LENGTH)
  for (const secret of added) secrets.set(secret, (secrets.get(secret) ?? 0) + 1)
  let done = false
  return () => {
    if (done) return
    done = true
    for (const secret of added) {
      const count = secrets.get(secret)! - 1
      if (count === 0) secrets.delete(secret)
      else secrets.set(secret, count)
    }
  }
}

function toEvent(formatted: string): LogEvent {
  const levelled = /^(ERROR|WARN)\b:?\s*/.exec(formatted)
  const level: LogLevel = levelled === null ? 'info' : levelled[1] === 'ERROR' ? 'error' : 'warn'
  let msg = redactUrlsInText(levelled === null ? formatted : formatted.slice(levelled[0].length))
  // Longest first, so a secret that contains another is replaced whole.
  for (const secret of [...secrets.keys()].sort((a, b) => b.length - a.length)) {
    if (msg.includes(secret)) msg = msg.replaceAll(secret, '[redacted]')
  }
  return { time: new Date().toISOString(), level, msg }
}

// A stack trace or a multi-line error stays one line of text.
function oneLine(text: string): string {
  return text.replace(/\s*\r?\n\s*/g, ' ⏎ ')
}
