import { serialize } from '../shared/json'
import { MAX_MESSAGE_BYTES } from '../shared/limits'
import type {
  AliasParams,
  GroupParams,
  IdentifyParams,
  Message,
  MessageType,
  PageParams,
  ParamsByType,
  ScreenParams,
  TrackParams,
} from '../shared/message'
import { describe, findMessageProblem, isPlainObject } from '../shared/validate'
import {
  type AnalyticsError,
  ClosedError,
  FilteredError,
  InvalidMessageError,
  MessageTooLargeError,
  QueueFullError,
} from './errors'
import { log } from './log'
import { normalizeMessage, withStringIds } from './normalize'
import {
  type AnalyticsOptions,
  type AnalyticsSettings,
  checkFlushAt,
  MAX_TIMER_MS,
  type ResolvedOptions,
  resolveOptions,
  splitArguments,
} from './options'
import { runBeforeSend } from './before-send'
import { createTransport, Emitter, nextTick, RUNTIME } from './platform/runtime'
import { Publisher } from './publisher'
import { LIBRARY_NAME, LIBRARY_VERSION } from '../shared/version'
import type { EventMap, AnyEvents, TrackParamsFor } from './typed-events'
import type { AnalyticsEvents, AnalyticsStats, CloseOptions, FlushOptions, MessageCallback } from './types'

const DEFAULT_CLOSE_TIMEOUT = 30_000

/**
 * The client: queues `identify`, `track`, `page`, `screen`, `group` and `alias` calls in memory
 * and sends them in the background, in batches, to `POST {endpoint}{path}` (`/v1/batch`).
 *
 * Calls return nothing and never throw: each takes an optional callback, called exactly once
 * when its message is delivered or fails, and every failure is also emitted as `'error'`.
 *
 * With an event map (`Analytics<Events>`, see `EventMap`), `track` takes only the planned events,
 * with their properties; without one, any.
 *
 * @example
 * const analytics = new Analytics('WRITE_KEY')
 * analytics.track({ userId: '42', event: 'Order Completed', properties: { revenue: '9.99' } })
 * await analytics.closeAndFlush()
 */
export class Analytics<Events extends EventMap = AnyEvents> extends Emitter<AnalyticsEvents> {
  readonly #options: ResolvedOptions
  readonly #publisher: Publisher
  /** Calls refused before they were queued (invalid, too large, queue full, closed). */
  #refused = 0
  /** Calls settled as delivered without being sent, under `disable: true`. */
  #skipped = 0
  /** Calls `beforeSend` dropped. */
  #filtered = 0
  /** Set by `closeAndFlush()`: later calls fail with `ERR_CLOSED`. */
  #closing: Promise<void> | undefined

  /**
   * Segment's form: the write key among the options.
   * @throws {TypeError} as the other form does.
   */
  constructor(settings: AnalyticsSettings)
  // Last, so that `ConstructorParameters<typeof Analytics>` is this form's.
  /**
   * @param writeKey The source's write key, sent as HTTP Basic auth and never logged.
   * @throws {TypeError} for an empty write key or an invalid option, naming it and the value; for
   * an unknown option, naming it and the nearest known name; for two names of one option.
   */
  constructor(writeKey: string, options?: AnalyticsOptions)
  constructor(writeKeyOrSettings: string | AnalyticsSettings, maybeOptions?: AnalyticsOptions) {
    super()
    const { writeKey, options } = splitArguments(writeKeyOrSettings, maybeOptions)
    this.#options = resolveOptions(writeKey, options)
    this.#publisher = new Publisher({
      flushAt: this.#options.flushAt,
      flushInterval: this.#options.flushInterval,
      maxQueueSize: this.#options.maxQueueSize,
      maxRetries: this.#options.maxRetries,
      maxRequestsPerSecond: this.#options.maxRequestsPerSecond,
      waitUntil: this.#options.waitUntil,
      transport: createTransport(
        {
          url: `${this.#options.endpoint}${this.#options.path}`,
          // Checked by resolveOptions: a non-empty string.
          writeKey: writeKey as string,
          timeout: this.#options.timeout,
          gzip: this.#options.gzip,
          userAgent: `${LIBRARY_NAME}/${LIBRARY_VERSION} (${RUNTIME})`,
        },
        this.#options.dispatcher,
      ),
      callback: (error, message, callback) => this.#tell(error, message, callback),
      emitError: (error) => this.#emitError(error),
      hasErrorListeners: () => this.listenerCount('error') > 0,
    })
  }

  /** Ties a user to their traits. */
  identify(params: IdentifyParams, callback?: MessageCallback): void {
    this.#call('identify', params, callback)
  }

  /** Records an action the user performed. Needs `event` (one of the event map's, when the client has one). */
  track(params: TrackParamsFor<Events>, callback?: MessageCallback): void {
    this.#call('track', params as TrackParams, callback)
  }

  /** Records a page view. */
  page(params: PageParams, callback?: MessageCallback): void {
    this.#call('page', params, callback)
  }

  /** Records a screen view in a mobile app. */
  screen(params: ScreenParams, callback?: MessageCallback): void {
    this.#call('screen', params, callback)
  }

  /** Ties a user to a group. Needs `groupId`. */
  group(params: GroupParams, callback?: MessageCallback): void {
    this.#call('group', params, callback)
  }

  /** Ties a previous identity to a user id. Needs `previousId` and `userId`. */
  alias(params: AliasParams, callback?: MessageCallback): void {
    this.#call('alias', params, callback)
  }

  /**
   * Sends everything queued and resolves once every message queued before the call has settled
   * (delivered or failed), including batches already in flight — or, with `timeout`, after that
   * many milliseconds at the latest (what is still in flight keeps going and settles later;
   * nothing is failed by it). Never rejects: failures go to callbacks and `'error'`.
   * @throws {TypeError} for a `timeout` that is not a number of at least 0 (a mistake in the code).
   */
  flush(options?: FlushOptions): Promise<void> {
    const timeout = options?.timeout
    if (timeout === undefined) return this.#publisher.flush()
    checkTimeout(timeout)
    return new Promise((resolve) => {
      // Held (not unref'd): the caller waits on it, and a serverless host must see it end.
      const timer = timeout > MAX_TIMER_MS ? undefined : setTimeout(resolve, timeout)
      void this.#publisher.flush().then(() => {
        clearTimeout(timer)
        resolve()
      })
    })
  }

  /**
   * Stops taking calls (later ones fail with `ERR_CLOSED`), sends what is queued, and resolves
   * once it has settled or `timeout` ms have passed — what is left then fails with `ERR_CLOSED`.
   * Releases timers and sockets (an injected `dispatcher` is left open). Never rejects; calling
   * it again returns the same promise.
   * `timeout: Infinity` (or anything past a Node timer's limit of about 24.8 days) waits for as
   * long as delivery takes.
   * At the deadline the messages left fail in one pass, before the promise resolves: each
   * message with a callback (or any message, when there are `'error'` listeners) costs one
   * parse of its JSON and one error without a stack trace, a few microseconds; the others cost
   * nothing. That work is the only overrun (about half a second for 100,000 messages with
   * callbacks; see `bench/sdk-close.mjs`).
   * @throws {TypeError} for a `timeout` that is not a number of at least 0 (a mistake in the code,
   * like an invalid constructor option).
   */
  closeAndFlush(options?: CloseOptions): Promise<void> {
    // `?.`: a JavaScript caller passing null gets the defaults, not a TypeError.
    const timeout = options?.timeout ?? DEFAULT_CLOSE_TIMEOUT
    checkTimeout(timeout)
    this.#closing ??= this.#publisher.close(timeout)
    return this.#closing
  }

  /**
   * Messages queued, in flight, delivered and failed, as counters, and whether the client was
   * made with `disable: true` (its deliveries then count calls settled without being sent).
   */
  stats(): AnalyticsStats {
    const counts = this.#publisher.counts
    const stats: AnalyticsStats = { ...counts, failed: counts.failed + this.#refused, filtered: this.#filtered }
    if (this.#options.disable) {
      stats.delivered += this.#skipped
      stats.disabled = true
    }
    return stats
  }

  /** Messages per batch (`flushAt`). Setting it sends what is queued and sizes later batches. */
  get flushAt(): number {
    return this.#publisher.flushAt
  }

  set flushAt(value: number) {
    this.#publisher.flushAt = checkFlushAt(value, 'flushAt')
  }

  /** The Go library's name for `flushAt`: `analytics.size = 1` sends every call at once. */
  get size(): number {
    return this.#publisher.flushAt
  }

  set size(value: number) {
    this.#publisher.flushAt = checkFlushAt(value, 'size')
  }

  #call<T extends MessageType>(type: T, given: ParamsByType[T], callback: MessageCallback | undefined): void {
    try {
      const params = withStringIds(given)
      if (this.#closing !== undefined) {
        this.#refuse(
          new ClosedError(`${type} call after closeAndFlush()`, { analyticsMessage: asGiven(type, given) }),
          callback,
        )
        return
      }
      const problem = findMessageProblem(type, params)
      if (problem !== undefined) {
        this.#refuse(new InvalidMessageError(problem, { analyticsMessage: asGiven(type, params) }), callback)
        return
      }
      let message = normalizeMessage(type, params, this.#options.integrations, this.#options.context)
      // Serialised once, here: these bytes are the snapshot, what is measured, and what is sent.
      const first = serialize(message)
      if (!first.ok) {
        this.#refuse(new InvalidMessageError(first.problem, { analyticsMessage: message }), callback)
        return
      }
      let serialized = first
      if (this.#options.beforeSend !== undefined) {
        const hooked = runBeforeSend(this.#options.beforeSend, type, serialized.json)
        if (hooked.kind === 'dropped') {
          this.#drop(hooked.message, callback)
          return
        }
        if (hooked.kind === 'invalid') {
          this.#refuse(hooked.error, callback)
          return
        }
        message = hooked.message
        serialized = hooked.serialized
      }
      if (serialized.bytes > MAX_MESSAGE_BYTES) {
        const error = new MessageTooLargeError(serialized.bytes, MAX_MESSAGE_BYTES, { analyticsMessage: message })
        this.#refuse(error, callback)
        return
      }
      if (this.#options.disable) {
        this.#skip(serialized.json, callback)
        return
      }
      if (!this.#publisher.enqueue({ json: serialized.json, bytes: serialized.bytes, callback })) {
        this.#refuse(new QueueFullError(this.#options.maxQueueSize, { analyticsMessage: message }), callback)
        return
      }
      if (log.enabled) log('queue: %s %s (%d bytes)', type, message.messageId, serialized.bytes)
    } catch (cause) {
      // A getter or proxy in the caller's fields that throws: an invalid message, never a crash.
      const problem = `reading its fields threw: ${cause instanceof Error ? cause.message : String(cause)}`
      this.#refuse(new InvalidMessageError(problem, { analyticsMessage: { type } as Message, cause }), callback)
    }
  }

  /** `disable: true`: settles a valid call as delivered, after the call has returned; sends nothing. */
  #skip(json: string, callback: MessageCallback | undefined): void {
    this.#skipped++
    if (callback !== undefined) nextTick(() => this.#tell(undefined, JSON.parse(json) as Message, callback))
  }

  /** `beforeSend` dropped the message: the callback is told (`ERR_FILTERED`), `'error'` is not. */
  #drop(message: Message, callback: MessageCallback | undefined): void {
    this.#filtered++
    log('drop: %s %s filtered by beforeSend', message.type, message.messageId)
    if (callback !== undefined) {
      nextTick(() => this.#tell(new FilteredError({ analyticsMessage: message }), message, callback))
    }
  }

  /** Reports a call refused before it was queued, after the call has returned. */
  #refuse(error: AnalyticsError, callback: MessageCallback | undefined): void {
    this.#refused++
    log('drop: %s', error.message)
    nextTick(() => {
      this.#tell(error, error.analyticsMessage, callback)
      this.#emitError(error)
    })
  }

  /** Tells the callback; what it throws is logged, never rethrown into the client. */
  #tell(error: AnalyticsError | undefined, message: Message, callback: MessageCallback | undefined): void {
    if (callback === undefined) return
    try {
      callback(error, message)
    } catch (thrown) {
      log('a callback threw: %O', thrown)
    }
  }

  /** Tells the `'error'` listeners; what they throw is logged, never rethrown into the client. */
  #emitError(error: AnalyticsError): void {
    // EventEmitter throws an 'error' nobody listens to: a telemetry client must not.
    if (this.listenerCount('error') === 0) return
    try {
      this.emit('error', error)
    } catch (thrown) {
      log("an 'error' listener threw: %O", thrown)
    }
  }
}

/** `flush()`'s and `closeAndFlush()`'s `timeout`: a number of milliseconds of at least 0. */
function checkTimeout(timeout: unknown): asserts timeout is number {
  if (typeof timeout !== 'number' || Number.isNaN(timeout) || timeout < 0) {
    throw new TypeError(`timeout must be a number of milliseconds of at least 0, got ${describe(timeout)}`)
  }
}

/** The fields of a refused call as given, with its `type`, for the error and the callback. */
function asGiven(type: MessageType, params: unknown): Message {
  return (isPlainObject(params) ? { ...params, type } : { type }) as Message
}
