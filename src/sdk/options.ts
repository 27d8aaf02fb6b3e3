import { MAX_TIMER_MS } from '../shared/retry'
import type { Dispatcher } from 'undici'
import type { Integrations } from '../shared/message'
import { describe, findIntegrationsProblem, isPlainObject } from '../shared/validate'

/** Options of `new Analytics(writeKey, options)`. Every option is optional. */
export interface AnalyticsOptions {
  /**
   * Base URL of the tracking API; batches go to `POST {endpoint}/v1/batch`.
   * @default 'https://api.segment.io'
   */
  endpoint?: string
  /**
   * Send a batch once this many messages are queued; `1` sends every call at once.
   * @default 20
   */
  flushAt?: number
  /** The Go library's name for `flushAt`. Give one or the other. */
  size?: number
  /**
   * Send what is queued once this many milliseconds have passed since the last flush (as the Go
   * library's `FlushAfter`); no timer runs while nothing is queued.
   * @default 5000
   */
  flushInterval?: number
  /** The Go library's name for `flushInterval` (`FlushAfter`), in milliseconds. */
  flushAfter?: number
  /**
   * Messages held in memory, queued and in flight together. Past it a call fails with
   * `ERR_QUEUE_FULL` instead of growing memory.
   * @default 100000
   */
  maxQueueSize?: number
  /**
   * The limit for one HTTP request, in milliseconds, from sending to the end of the answer.
   * A request that takes longer is aborted and retried.
   * @default 10000
   */
  timeout?: number
  /**
   * Retries of a failed batch after its first attempt, before its messages fail with
   * `ERR_DELIVERY`. Retries also stop once 60 seconds have passed since the first attempt.
   * @default 6
   */
  maxRetries?: number
  /** Destination flags merged under each call's own `integrations` (the call's flags win). */
  integrations?: Integrations
  /**
   * The undici `Dispatcher` requests go through: a `ProxyAgent` for a proxy, a `MockAgent` in
   * tests. The client never closes a dispatcher it was given.
   * @default a keep-alive `Agent` owned (and closed) by the client
   */
  dispatcher?: Dispatcher
  /**
   * Send request bodies gzip-compressed, with `Content-Encoding: gzip`: less bandwidth, more CPU
   * (compressed off the event loop, on libuv's thread pool). The 500,000-byte body limit, and so
   * how messages are split into batches, is on the uncompressed body. The endpoint must decode
   * gzip (the Tracklet relay and Segment's API do).
   * @default false
   */
  gzip?: boolean
}

/** Options after defaults and aliases, validated. */
export interface ResolvedOptions {
  readonly endpoint: string
  readonly flushAt: number
  readonly flushInterval: number
  readonly maxQueueSize: number
  readonly timeout: number
  readonly maxRetries: number
  readonly integrations: Integrations | undefined
  readonly dispatcher: Dispatcher | undefined
  readonly gzip: boolean
}

/** The defaults, in the units of the options. */
export const DEFAULT_OPTIONS = Object.freeze({
  endpoint: 'https://api.segment.io',
  flushAt: 20,
  flushInterval: 5_000,
  maxQueueSize: 100_000,
  timeout: 10_000,
  maxRetries: 6,
  gzip: false,
})

/** Resolves options over the frozen defaults. Throws a `TypeError` naming a bad option and its value. */
export function resolveOptions(writeKey: unknown, options: AnalyticsOptions | undefined): ResolvedOptions {
  if (typeof writeKey !== 'string' || writeKey.trim() === '') {
    // Never echo the key itself: describe only what kind of value it was.
    throw new TypeError(
      `writeKey must be a non-empty string, got ${typeof writeKey === 'string' ? 'an empty string' : describe(writeKey)}`,
    )
  }
  if (options !== undefined && !isPlainObject(options)) {
    throw new TypeError(`options must be an object, got ${describe(options)}`)
  }
  const given = options ?? {}
  return {
    endpoint: checkEndpoint(given.endpoint ?? DEFAULT_OPTIONS.endpoint),
    flushAt: checkFlushAt(pickAlias(given, 'flushAt', 'size') ?? DEFAULT_OPTIONS.flushAt, 'flushAt'),
    flushInterval: checkPositive(
      pickAlias(given, 'flushInterval', 'flushAfter') ?? DEFAULT_OPTIONS.flushInterval,
      'flushInterval',
    ),
    maxQueueSize: checkInteger(given.maxQueueSize ?? DEFAULT_OPTIONS.maxQueueSize, 'maxQueueSize', 1),
    timeout: checkPositive(given.timeout ?? DEFAULT_OPTIONS.timeout, 'timeout'),
    maxRetries: checkInteger(given.maxRetries ?? DEFAULT_OPTIONS.maxRetries, 'maxRetries', 0),
    integrations: checkIntegrations(given.integrations),
    dispatcher: checkDispatcher(given.dispatcher),
    gzip: checkBoolean(given.gzip ?? DEFAULT_OPTIONS.gzip, 'gzip'),
  }
}

/** `flushAt` (or its alias `size`): an integer of at least 1. Also used by the `size` setter. */
export function checkFlushAt(value: unknown, name: string): number {
  return checkInteger(value, name, 1)
}

function pickAlias<K extends keyof AnalyticsOptions, A extends keyof AnalyticsOptions>(
  given: AnalyticsOptions,
  name: K,
  alias: A,
): unknown {
  const value: unknown = given[name]
  const aliased: unknown = given[alias]
  if (value !== undefined && aliased !== undefined && value !== aliased) {
    throw new TypeError(
      `${name} and ${alias} are the same option: give one, got ${describe(value)} and ${describe(aliased)}`,
    )
  }
  return value ?? aliased
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

function checkEndpoint(value: unknown): string {
  const protocol = typeof value === 'string' && URL.canParse(value) ? new URL(value).protocol : undefined
  if (typeof value !== 'string' || (protocol !== 'http:' && protocol !== 'https:')) {
    throw new TypeError(`endpoint must be an http(s) URL, got ${describe(value)}`)
  }
  // `{endpoint}/v1/batch`: keep any path prefix, without a trailing slash.
  return value.replace(/\/+$/, '')
}

function checkIntegrations(value: unknown): Integrations | undefined {
  if (value === undefined) return undefined
  const problem = findIntegrationsProblem(value)
  if (problem !== undefined) throw new TypeError(problem)
  return Object.freeze({ ...(value as Integrations) })
}

function checkDispatcher(value: unknown): Dispatcher | undefined {
  if (value === undefined) return undefined
  if (typeof value !== 'object' || value === null || typeof (value as Dispatcher).dispatch !== 'function') {
    throw new TypeError(
      `dispatcher must be an undici Dispatcher (an Agent, ProxyAgent or MockAgent), got ${describe(value)}`,
    )
  }
  return value as Dispatcher
}
