import { MAX_TIMER_MS } from '../shared/retry'
import type { Dispatcher } from 'undici'
import type { Integrations, Message, ObjectFields } from '../shared/message'
import { didYouMean } from '../shared/nearest-name'
import { describe, findIntegrationsProblem, isPlainObject } from '../shared/validate'
import { CAN_GZIP, TAKES_DISPATCHER } from './platform/runtime'

/**
 * Options of `new Analytics(writeKey, options)` (or of `new Analytics({ writeKey, ...options })`).
 * Every option is optional. Segment's and the Go library's names are accepted as aliases; giving
 * two names of one option, or a name that is not an option, throws a `TypeError`.
 */
export interface AnalyticsOptions {
  /**
   * Base URL of the tracking API; batches go to `POST {endpoint}{path}`.
   * @default 'https://api.segment.io'
   */
  endpoint?: string | undefined
  /** Segment's name for `endpoint` (`@segment/analytics-node`, `analytics-node`). Give one or the other. */
  host?: string | undefined
  /**
   * The path batches are posted to, after `endpoint` (Segment's `path`).
   * @default '/v1/batch'
   */
  path?: string | undefined
  /**
   * Send a batch once this many messages are queued; `1` (or `0`, as Segment's libraries read it)
   * sends every call at once.
   * @default 20
   */
  flushAt?: number | undefined
  /** The Go library's name for `flushAt` (analytics-go v2's `Size`). Give one name only. */
  size?: number | undefined
  /** `@segment/analytics-node`'s former name for `flushAt`. Give one name only. */
  maxEventsInBatch?: number | undefined
  /**
   * Send what is queued once this many milliseconds have passed since the last flush; no timer
   * runs while nothing is queued.
   * @default 5000
   */
  flushInterval?: number | undefined
  /** The seed's Go-style name for `flushInterval`, in milliseconds. Give one name only. */
  flushAfter?: number | undefined
  /** analytics-go's `Interval`, as a name for `flushInterval`, in milliseconds. Give one name only. */
  interval?: number | undefined
  /**
   * Messages held in memory, queued and in flight together. Past it a call fails with
   * `ERR_QUEUE_FULL` instead of growing memory.
   * @default 100000
   */
  maxQueueSize?: number | undefined
  /**
   * The limit for one HTTP request, in milliseconds, from sending to the end of the answer.
   * A request that takes longer is aborted and retried.
   * @default 10000
   */
  timeout?: number | undefined
  /** `@segment/analytics-node`'s name for `timeout`, in milliseconds. Give one name only. */
  httpRequestTimeout?: number | undefined
  /**
   * Retries of a failed batch after its first attempt, before its messages fail with
   * `ERR_DELIVERY`. Retries also stop once 60 seconds have passed since the first attempt.
   * @default 6
   */
  maxRetries?: number | undefined
  /** Destination flags merged under each call's own `integrations` (the call's flags win). */
  integrations?: Integrations | undefined
  /**
   * The undici `Dispatcher` requests go through: a `ProxyAgent` for a proxy, a `MockAgent` in
   * tests. The client never closes a dispatcher it was given. Node only: the builds for Bun,
   * Deno, Workers and Edge send with `fetch` and refuse this option with a `TypeError`.
   * @default a keep-alive `Agent` owned (and closed) by the client
   */
  dispatcher?: Dispatcher | undefined
  /**
   * Runs once per call, after validation and normalisation and before the size check, with a copy
   * of the message as it would be sent (JSON values: a `Date` is its ISO string). Return it, or a
   * changed message, to send that (validated and size-checked again); return `null` or `undefined`
   * to drop it: its callback gets `ERR_FILTERED`, `stats().filtered` counts it, and no `'error'` is
   * emitted. A hook that throws fails that message with `ERR_INVALID_MESSAGE` (the thrown error as
   * its `cause`). Synchronous: add context, strip PII, sample.
   */
  beforeSend?: ((message: Message) => Message | null | undefined) | undefined
  /**
   * Context merged under each call's `context` (the call's top-level keys win); `context.library`
   * is still added over both.
   */
  context?: ObjectFields | undefined
  /**
   * For serverless hosts: a function the client hands a promise to for each batch request it
   * starts, resolving (never rejecting) once that batch has settled, retries included —
   * `ctx.waitUntil` on Cloudflare Workers, `waitUntil` from `@vercel/functions`. With it, what one
   * turn of the event loop queued is sent at the end of that turn, so an invocation never ends
   * with messages waiting for `flushAt` or `flushInterval`.
   */
  waitUntil?: ((promise: Promise<void>) => void) | undefined
  /**
   * The most batch requests started per second (a retry waits for its backoff instead).
   * @default no cap
   */
  maxRequestsPerSecond?: number | undefined
  /**
   * Send request bodies gzip-compressed, with `Content-Encoding: gzip`: less bandwidth, more CPU
   * (compressed off the event loop, on libuv's thread pool). The 500,000-byte body limit, and so
   * how messages are split into batches, is on the uncompressed body. The endpoint must decode
   * gzip (the Tracklet relay and Segment's API do).
   * @default false
   */
  gzip?: boolean | undefined
  /**
   * `true`: send nothing, for tests and local runs. Calls are still validated (an invalid one
   * fails as usual); valid ones settle as delivered, and `stats().disabled` is `true`.
   * @default false
   */
  disable?: boolean | undefined
}

/** `new Analytics({ writeKey, ...options })`: Segment's form, the write key among the options. */
export interface AnalyticsSettings extends AnalyticsOptions {
  /** The source's write key, sent as HTTP Basic auth and never logged. */
  writeKey: string
}

/** Options after defaults and aliases, validated. */
export interface ResolvedOptions {
  readonly endpoint: string
  readonly path: string
  readonly flushAt: number
  readonly flushInterval: number
  readonly maxQueueSize: number
  readonly timeout: number
  readonly maxRetries: number
  readonly integrations: Integrations | undefined
  readonly dispatcher: Dispatcher | undefined
  readonly gzip: boolean
  readonly disable: boolean
  readonly beforeSend: ((message: Message) => Message | null | undefined) | undefined
  readonly context: ObjectFields | undefined
  readonly waitUntil: ((promise: Promise<void>) => void) | undefined
  readonly maxRequestsPerSecond: number | undefined
}

/** The defaults, in the units of the options. */
export const DEFAULT_OPTIONS = Object.freeze({
  endpoint: 'https://api.segment.io',
  path: '/v1/batch',
  flushAt: 20,
  flushInterval: 5_000,
  maxQueueSize: 100_000,
  timeout: 10_000,
  maxRetries: 6,
  gzip: false,
  disable: false,
})

/**
 * The other names of an option: Segment's (`host`, `maxEventsInBatch`, `httpRequestTimeout`) and
 * the Go library's (`size`, `flushAfter`, `interval`). The one table of aliases.
 */
export const OPTION_ALIASES = Object.freeze({
  endpoint: Object.freeze(['host']),
  flushAt: Object.freeze(['size', 'maxEventsInBatch']),
  flushInterval: Object.freeze(['flushAfter', 'interval']),
  timeout: Object.freeze(['httpRequestTimeout']),
} as const satisfies Partial<Record<keyof AnalyticsOptions, readonly (keyof AnalyticsOptions)[]>>)

// Every name `AnalyticsOptions` declares, checked both ways by the compiler: an option added to
// the interface and not here (or the reverse) fails the type check, so none is refused by mistake.
const KNOWN_OPTIONS: Readonly<Record<keyof AnalyticsOptions, true>> = Object.freeze({
  endpoint: true,
  host: true,
  path: true,
  flushAt: true,
  size: true,
  maxEventsInBatch: true,
  flushInterval: true,
  flushAfter: true,
  interval: true,
  maxQueueSize: true,
  timeout: true,
  httpRequestTimeout: true,
  maxRetries: true,
  integrations: true,
  dispatcher: true,
  gzip: true,
  disable: true,
  beforeSend: true,
  context: true,
  waitUntil: true,
  maxRequestsPerSecond: true,
})

/**
 * Options of Segment's libraries that this client does not take under that name, with what to use
 * instead: a better hint than the nearest name, which for these would mislead.
 */
const SEGMENT_ONLY_OPTIONS: Readonly<Record<string, string>> = Object.freeze({
  enable: '`disable` (inverted: `enable: false` is `disable: true`)',
  errorHandler: "an `'error'` listener or a call's callback",
  httpClient: '`dispatcher` (an undici Dispatcher)',
  axiosConfig: '`dispatcher` (an undici Dispatcher)',
  axiosInstance: '`dispatcher` (an undici Dispatcher)',
  retryCount: '`maxRetries`',
  maxInternalQueueSize: '`maxQueueSize` (in messages)',
})

/** Every option name the client takes, aliases included. */
export const OPTION_NAMES: readonly string[] = Object.freeze(Object.keys(KNOWN_OPTIONS))

/**
 * The constructor's arguments, in either form: `(writeKey, options?)` or `({ writeKey, ...options })`.
 * Throws a `TypeError` when both forms are mixed.
 */
export function splitArguments(first: unknown, second: unknown): { writeKey: unknown; options: unknown } {
  if (!isPlainObject(first)) {
    if (isPlainObject(second) && Object.hasOwn(second, 'writeKey')) {
      throw new TypeError('writeKey is given twice: as the first argument and among the options; give it once')
    }
    return { writeKey: first, options: second }
  }
  if (second !== undefined) {
    throw new TypeError(
      'new Analytics({ writeKey, ...options }) takes one argument; or give new Analytics(writeKey, options)',
    )
  }
  const { writeKey, ...options } = first
  if (writeKey === undefined) {
    throw new TypeError(
      'writeKey is missing: new Analytics({ writeKey, ...options }) or new Analytics(writeKey, options)',
    )
  }
  return { writeKey, options }
}

/**
 * Resolves options over the frozen defaults. Throws a `TypeError` naming a bad option and its
 * value, an unknown option and the nearest known name, or two names given for one option.
 */
export function resolveOptions(writeKey: unknown, options: unknown): ResolvedOptions {
  if (typeof writeKey !== 'string' || writeKey.trim() === '') {
    // Never echo the key itself: describe only what kind of value it was.
    throw new TypeError(
      `writeKey must be a non-empty string, got ${typeof writeKey === 'string' ? 'an empty string' : describe(writeKey)}`,
    )
  }
  if (options !== undefined && !isPlainObject(options)) {
    throw new TypeError(`options must be an object, got ${describe(options)}`)
  }
  const given: Record<string, unknown> = options ?? {}
  for (const name of Object.keys(given)) {
    if (!Object.hasOwn(KNOWN_OPTIONS, name)) {
      // Never a silent default: a misspelt `host` would otherwise send the data to Segment's cloud.
      const instead = Object.hasOwn(SEGMENT_ONLY_OPTIONS, name)
        ? ` (use ${SEGMENT_ONLY_OPTIONS[name]})`
        : didYouMean(name, OPTION_NAMES)
      throw new TypeError(`unknown option \`${name.slice(0, 40)}\`${instead}`)
    }
  }
  const endpoint = pickOption(given, 'endpoint')
  const flushAt = pickOption(given, 'flushAt')
  const flushInterval = pickOption(given, 'flushInterval')
  const timeout = pickOption(given, 'timeout')
  return {
    endpoint: checkEndpoint(endpoint.value ?? DEFAULT_OPTIONS.endpoint, endpoint.name),
    path: checkPath(given['path'] ?? DEFAULT_OPTIONS.path),
    flushAt: checkFlushAt(flushAt.value ?? DEFAULT_OPTIONS.flushAt, flushAt.name),
    flushInterval: checkPositive(flushInterval.value ?? DEFAULT_OPTIONS.flushInterval, flushInterval.name),
    maxQueueSize: checkInteger(given['maxQueueSize'] ?? DEFAULT_OPTIONS.maxQueueSize, 'maxQueueSize', 1),
    timeout: checkPositive(timeout.value ?? DEFAULT_OPTIONS.timeout, timeout.name),
    maxRetries: checkInteger(given['maxRetries'] ?? DEFAULT_OPTIONS.maxRetries, 'maxRetries', 0),
    integrations: checkIntegrations(given['integrations']),
    dispatcher: checkDispatcher(given['dispatcher']),
    gzip: checkGzip(given['gzip'] ?? DEFAULT_OPTIONS.gzip),
    disable: checkBoolean(given['disable'] ?? DEFAULT_OPTIONS.disable, 'disable'),
    beforeSend: checkFunction(given['beforeSend'], 'beforeSend') as ResolvedOptions['beforeSend'],
    context: checkContext(given['context']),
    waitUntil: checkFunction(given['waitUntil'], 'waitUntil') as ResolvedOptions['waitUntil'],
    maxRequestsPerSecond:
      given['maxRequestsPerSecond'] === undefined
        ? undefined
        : checkInteger(given['maxRequestsPerSecond'], 'maxRequestsPerSecond', 1),
  }
}

/**
 * `flushAt` (or an alias): an integer of at least 1, where `0` means 1 as in both of Segment's
 * Node libraries (a batch of none would never be sent). Also used by the `size`/`flushAt` setters.
 */
export function checkFlushAt(value: unknown, name: string): number {
  return value === 0 ? 1 : checkInteger(value, name, 1)
}

/**
 * The value given for `option` under any of its names, and the name it was given under (errors
 * name what the caller wrote); two names given at once throw.
 */
function pickOption(
  given: Record<string, unknown>,
  option: keyof typeof OPTION_ALIASES,
): { value: unknown; name: string } {
  const names = [option, ...OPTION_ALIASES[option]].filter((each) => given[each] !== undefined)
  if (names.length > 1) {
    const values = names.map((each) => describe(given[each])).join(' and ')
    throw new TypeError(`${names.join(' and ')} are the same option: give one, got ${values}`)
  }
  const name = names[0] ?? option
  return { value: given[name], name }
}

function checkInteger(value: unknown, name: string, min: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min) {
    throw new TypeError(`${name} must be an integer of at least ${min}, got ${describe(value)}`)
  }
  return value
}

/**
 * The longest delay a Node timer honours (2^31 - 1 ms, about 24.8 days): `setTimeout` quietly
 * turns a longer one into 1 ms, which would make a generous limit fire at once.
 */
export { MAX_TIMER_MS }

function checkPositive(value: unknown, name: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0 || value > MAX_TIMER_MS) {
    throw new TypeError(
      `${name} must be a positive number of milliseconds, at most ${MAX_TIMER_MS}, got ${describe(value)}`,
    )
  }
  return value
}

function checkBoolean(value: unknown, name: string): boolean {
  if (typeof value !== 'boolean') throw new TypeError(`${name} must be true or false, got ${describe(value)}`)
  return value
}

function checkEndpoint(value: unknown, name: string): string {
  const protocol = typeof value === 'string' && URL.canParse(value) ? new URL(value).protocol : undefined
  if (typeof value !== 'string' || (protocol !== 'http:' && protocol !== 'https:')) {
    throw new TypeError(`${name} must be an http(s) URL, got ${describe(value)}`)
  }
  // `{endpoint}{path}`: keep any path prefix, without a trailing slash.
  return value.replace(/\/+$/, '')
}

function checkPath(value: unknown): string {
  if (typeof value !== 'string' || value === '' || /[?#\s]/.test(value)) {
    throw new TypeError(`path must be a URL path such as "/v1/batch", got ${describe(value)}`)
  }
  // Segment's libraries add the leading slash when it is missing; so does this one.
  return value.startsWith('/') ? value : `/${value}`
}

function checkIntegrations(value: unknown): Integrations | undefined {
  if (value === undefined) return undefined
  const problem = findIntegrationsProblem(value)
  if (problem !== undefined) throw new TypeError(problem)
  return Object.freeze({ ...(value as Integrations) })
}

function checkGzip(value: unknown): boolean {
  const gzip = checkBoolean(value, 'gzip')
  if (gzip && !CAN_GZIP) {
    throw new TypeError('gzip: true needs CompressionStream, which this runtime does not have: leave gzip off here')
  }
  return gzip
}

function checkFunction(value: unknown, name: string): ((...args: never[]) => unknown) | undefined {
  if (value === undefined) return undefined
  if (typeof value !== 'function') throw new TypeError(`${name} must be a function, got ${describe(value)}`)
  return value as (...args: never[]) => unknown
}

function checkContext(value: unknown): ObjectFields | undefined {
  if (value === undefined) return undefined
  if (!isPlainObject(value)) throw new TypeError(`context must be an object, got ${describe(value)}`)
  return Object.freeze({ ...value })
}

function checkDispatcher(value: unknown): Dispatcher | undefined {
  if (value === undefined) return undefined
  if (!TAKES_DISPATCHER) {
    throw new TypeError(
      'dispatcher is an undici Dispatcher, which this build of tracklet (for Bun, Deno, Workers and Edge) cannot use: it sends with fetch. Remove the option, or run on Node',
    )
  }
  if (typeof value !== 'object' || value === null || typeof (value as Dispatcher).dispatch !== 'function') {
    throw new TypeError(
      `dispatcher must be an undici Dispatcher (an Agent, ProxyAgent or MockAgent), got ${describe(value)}`,
    )
  }
  return value as Dispatcher
}
