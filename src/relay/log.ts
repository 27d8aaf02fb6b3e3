import createDebug from 'debug'
import { redactUrl } from '../shared/redact-url'
import { redactUrlsInText } from './redact'

/**
 * The relay's log: one line per event, at a level, with the event's fields, every URL cut to
 * origin and path and every secret the running relays were configured with replaced by
 * `[redacted]` — a net under the rule that code never passes a secret here in the first place.
 *
 * Where lines go:
 * - The `tracklet relay` command writes them to stderr ({@link writeLogTo}), as text, or as JSON
 *   with `LOG_FORMAT=json`, without ever blocking on a slow reader (see `log-sink.ts`).
 * - A program that embeds the relay (`createRelay`) stays quiet unless it asks, as a library
 *   should: `DEBUG=tracklet:relay` writes them through the `debug` package.
 *
 * Call sites say the level and pass what a log pipeline would filter on as fields:
 * `log.warn('circuit of … opened', { event: 'circuit-opened', url })`.
 */
export interface RelayLog {
  /** Something failed that an operator must look at: a store write, an internal error. */
  error(msg: string, fields?: LogFields): void
  /** Something an operator should know: a circuit opened or closed, a dead letter, a refusal. */
  warn(msg: string, fields?: LogFields): void
  /** The relay's life: started, stopped, recovered. Never one line per message. */
  info(msg: string, fields?: LogFields): void
  /** One line per message or attempt: off unless `logLevel: 'debug'`. */
  debug(msg: string, fields?: LogFields): void
  /** Whether a line at `level` would be written anywhere (guard a costly message with it). */
  isLevelEnabled(level: LogLevel): boolean
  /** The `debug` logger's switch (set by `DEBUG=tracklet:relay`). */
  enabled: boolean
  /** The `debug` logger's writer, receiving its formatted arguments (tests capture lines with it). */
  log: (...args: unknown[]) => void
}

/** How a line is written: `text` for people, `json` for log pipelines. */
export type LogFormat = 'text' | 'json'

/** The levels, most severe first: a threshold writes its own level and those before it. */
export const LOG_LEVELS = ['error', 'warn', 'info', 'debug'] as const

/** An event's severity. */
export type LogLevel = (typeof LOG_LEVELS)[number]

/** The level a relay logs at when neither `logLevel` nor `LOG_LEVEL` says otherwise. */
export const DEFAULT_LOG_LEVEL: LogLevel = 'info'

/**
 * What a log pipeline filters on, beside the message. Every field is optional; `url` is cut to
 * origin and path, and string values are cleaned of secrets like the message.
 */
export interface LogFields {
  /** A stable, kebab-case name of what happened (`delivered`, `circuit-opened`, …). */
  event?: string | undefined
  source?: string | undefined
  deliveryId?: number | undefined
  messageId?: string | undefined
  url?: string | undefined
  status?: number | undefined
  attempt?: number | undefined
  /** A duration in milliseconds. */
  ms?: number | undefined
  [name: string]: unknown
}

/** One event of the log, as every sink receives it: already redacted. */
export interface LogEvent {
  /** ISO time. */
  time: string
  level: LogLevel
  msg: string
  /** The event's fields, redacted; empty when it has none. */
  fields: LogFields
}

// Secrets shorter than this are not looked for: replacing every "ab" in every line protects
// nothing and garbles the log.
const MIN_SECRET_LENGTH = 4

const debugLog = createDebug('tracklet:relay')
/** Where events go besides `debug` (the CLI's stderr). */
const sinks = new Set<(event: LogEvent) => void>()
/** The secrets of every running relay, each with how many relays hold it. */
const secrets = new Map<string, number>()
/** The level each running relay asked for, each with how many relays asked: the most verbose wins. */
const levels = new Map<LogLevel, number>()
/** Index in LOG_LEVELS of the most verbose level written. */
let threshold = LOG_LEVELS.indexOf(DEFAULT_LOG_LEVEL)

function isLevelEnabled(level: LogLevel): boolean {
  return LOG_LEVELS.indexOf(level) <= threshold && (sinks.size > 0 || debugLog.enabled)
}

function write(level: LogLevel, msg: string, fields: LogFields | undefined): void {
  if (!isLevelEnabled(level)) return
  const event: LogEvent = { time: new Date().toISOString(), level, msg: clean(msg), fields: cleanFields(fields) }
  for (const sink of sinks) sink(event)
  // A program that installed a sink has its lines; DEBUG would only repeat them.
  if (sinks.size === 0) debugLog('%s %s', level, oneLine(event.msg))
}

/** The relay's log (see {@link RelayLog}). */
export const log: RelayLog = Object.defineProperties(
  {
    error: (msg: string, fields?: LogFields) => write('error', msg, fields),
    warn: (msg: string, fields?: LogFields) => write('warn', msg, fields),
    info: (msg: string, fields?: LogFields) => write('info', msg, fields),
    debug: (msg: string, fields?: LogFields) => write('debug', msg, fields),
    isLevelEnabled,
  } as RelayLog,
  {
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
  },
)

/**
 * Writes every event from now on to `sink` until the returned function is called. The
 * `tracklet relay` command passes a line writer from `log-sink.ts`; tests pass their own.
 */
export function addLogSink(sink: (event: LogEvent) => void): () => void {
  sinks.add(sink)
  return () => {
    sinks.delete(sink)
  }
}

/**
 * Writes at least `level` from now on, until the returned function is called. Each relay holds
 * its `logLevel` while it runs; with several in one process the most verbose is written.
 */
export function useLogLevel(level: LogLevel): () => void {
  levels.set(level, (levels.get(level) ?? 0) + 1)
  recomputeThreshold()
  let done = false
  return () => {
    if (done) return
    done = true
    const count = levels.get(level)! - 1
    if (count === 0) levels.delete(level)
    else levels.set(level, count)
    recomputeThreshold()
  }
}

function recomputeThreshold(): void {
  threshold =
    levels.size === 0
      ? LOG_LEVELS.indexOf(DEFAULT_LOG_LEVEL)
      : Math.max(...[...levels.keys()].map((l) => LOG_LEVELS.indexOf(l)))
}

/**
 * The level `LOG_LEVEL` (or the `logLevel` option) asks for: {@link DEFAULT_LOG_LEVEL} when unset
 * or empty.
 * @throws {TypeError} for anything but `error`, `warn`, `info` or `debug`, naming `name`.
 */
export function logLevelFrom(value: unknown, name = 'LOG_LEVEL'): LogLevel {
  if (value === undefined || value === '') return DEFAULT_LOG_LEVEL
  if ((LOG_LEVELS as readonly unknown[]).includes(value)) return value as LogLevel
  throw new TypeError(`${name} must be one of ${LOG_LEVELS.join(', ')}, got ${JSON.stringify(value)}`)
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

/** `1 delivery`, `3 deliveries`: a count with its noun, in the right number. */
export function plural(count: number, one: string, many = `${one}s`): string {
  return `${count} ${count === 1 ? one : many}`
}

/** A time in log text: ISO 8601, never epoch milliseconds. */
export function logTime(epochMs: number): string {
  return new Date(epochMs).toISOString()
}

function clean(text: string): string {
  let msg = redactUrlsInText(text)
  // Longest first, so a secret that contains another is replaced whole.
  for (const secret of [...secrets.keys()].sort((a, b) => b.length - a.length)) {
    if (msg.includes(secret)) msg = msg.replaceAll(secret, '[redacted]')
  }
  return msg
}

function cleanFields(fields: LogFields | undefined): LogFields {
  if (fields === undefined) return {}
  const cleaned: LogFields = {}
  for (const [name, value] of Object.entries(fields)) {
    if (value === undefined) continue
    cleaned[name] =
      name === 'url' && typeof value === 'string' ? redactUrl(value) : typeof value === 'string' ? clean(value) : value
  }
  return cleaned
}

/** A stack trace or a multi-line error stays one line of text. */
export function oneLine(text: string): string {
  return text.replace(/\s*\r?\n\s*/g, ' ⏎ ')
}
