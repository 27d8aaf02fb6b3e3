import PQueue from 'p-queue'
import type { Message } from '../shared/message'
import { Batch, type QueuedMessage } from './batch'
import { BodyBuffers } from './body-buffers'
import { unwatchBeforeExit, watchBeforeExit } from './before-exit'
import { type AnalyticsError, ClosedError, DeliveryError } from './errors'
import { log } from './log'
import { MAX_TIMER_MS } from './options'
import { PauseGate } from './pause-gate'
import { type AttemptOutcome, decideRetry, DEFAULT_RETRY_POLICY, type RetryPolicy } from './retry-policy'
import type { Transport } from './transport'
import type { MessageCallback } from './types'

/** Requests in flight at once: enough to hide latency, few enough to be kind to the API. */
const MAX_REQUESTS_IN_FLIGHT = 4

/** Where each settled message is reported: its callback and the client's `'error'` event. */
export type SettleReporter = (
  error: AnalyticsError | undefined,
  message: Message,
  callback: MessageCallback | undefined,
) => void

export interface PublisherOptions {
  flushAt: number
  flushInterval: number
  maxQueueSize: number
  maxRetries: number
  transport: Transport
  report: SettleReporter
  /** Whether anyone listens for failures beyond callbacks (the client's `'error'` listeners). */
  hasErrorListeners: () => boolean
}

/**
 * Queues accepted messages into batches and sends them: at `flushAt` messages, at the body's
 * byte limit, once `flushInterval` has passed since the last flush, on `flush()` and `close()`, and when the
 * event loop is about to empty. Bounds the messages held and the requests in flight, retries per
 * `decideRetry`, and settles every message exactly once: delivered, or failed and reported.
 */
export class Publisher {
  /** Messages per batch; changed by the `size`/`flushAt` setter. */
  #flushAt: number
  readonly #flushInterval: number
  readonly #maxQueueSize: number
  readonly #policy: RetryPolicy
  readonly #transport: Transport
  readonly #report: SettleReporter
  readonly #hasErrorListeners: () => boolean
  /** The batch being filled by calls. */
  #current: Batch
  /** Sends `#current` once `flushInterval` has passed since the last flush. */
  #intervalTimer: NodeJS.Timeout | undefined
  /** When the last flush was (or the publisher was made): the interval counts from here. */
  #lastFlushAt = Date.now()
  /** Bounds the requests in flight; holds batches waiting for a free slot. */
  readonly #requests = new PQueue({ concurrency: MAX_REQUESTS_IN_FLIGHT })
  /** Request bodies are written into these, reused across requests when the dispatcher is our own. */
  readonly #bodies: BodyBuffers
  /**
   * Batches handed to `#requests` whose sending has not started: when `close()` runs out of time
   * they fail in one pass, rather than one by one as the queue would hand them out.
   */
  readonly #waiting = new Set<Batch>()
  /** One promise per batch handed to `#requests` and not settled yet; none ever rejects. */
  readonly #outstanding = new Set<Promise<void>>()
  /** Aborted when `close()` runs out of time: requests and backoffs stop, messages fail. */
  readonly #giveUp = new AbortController()
  /** Holds every batch while a `Retry-After` from the API runs. */
  readonly #pause = new PauseGate(this.#giveUp.signal)
  /** The number the next batch is made with: batches held by a pause go on in this order. */
  #nextSequence = 0
  /** Backoff timers now running, so they can be made to hold the process while draining. */
  readonly #backoffTimers = new Set<NodeJS.Timeout>()
  /** Set when the process is about to exit or the client is closing: backoffs then keep the process alive. */
  #draining = false
  /** Whether this publisher is registered for `beforeExit` (it is while it holds messages). */
  #watchingExit = false
  #queued = 0
  #inFlight = 0
  #delivered = 0
  #failed = 0

  constructor(options: PublisherOptions) {
    this.#flushAt = options.flushAt
    this.#flushInterval = options.flushInterval
    this.#maxQueueSize = options.maxQueueSize
    this.#policy = { ...DEFAULT_RETRY_POLICY, maxRetries: options.maxRetries }
    this.#transport = options.transport
    this.#bodies = new BodyBuffers(this.#transport.ownsDispatcher ? MAX_REQUESTS_IN_FLIGHT : 0)
    this.#report = options.report
    this.#hasErrorListeners = options.hasErrorListeners
    this.#current = new Batch(this.#flushAt)
  }

  get flushAt(): number {
    return this.#flushAt
  }

  set flushAt(value: number) {
    this.#flushAt = value
    // The batch being filled was sized for the old value: send it now, size the next anew.
    this.#dispatch()
    this.#current = new Batch(value)
  }

  get counts(): { queued: number; inFlight: number; delivered: number; failed: number } {
    return { queued: this.#queued, inFlight: this.#inFlight, delivered: this.#delivered, failed: this.#failed }
  }

  /** Queues an accepted message; `false` when `maxQueueSize` messages are already held. */
  enqueue(message: QueuedMessage): boolean {
    if (this.#queued + this.#inFlight >= this.#maxQueueSize) return false
    if (this.#current.add(message) !== 'added') {
      // The body would pass its byte limit: send what is there, start a new batch with this one.
      this.#dispatch()
      this.#current.add(message)
    }
    this.#queued++
    if (!this.#watchingExit) {
      this.#watchingExit = true
      watchBeforeExit(this.#drain)
    }
    if (this.#current.isFull) this.#dispatch()
    else if (this.#intervalTimer === undefined) {
      // Armed only while something is queued, so an idle client wakes no one; a message queued
      // after a long quiet spell is sent at once, as the interval has already passed.
      const due = Math.max(0, this.#lastFlushAt + this.#flushInterval - Date.now())
      this.#intervalTimer = setTimeout(() => this.#dispatch(), due)
      // Never hold the process for a timer: `beforeExit` sends what is left.
      this.#intervalTimer.unref()
    }
    return true
  }

  /** Resolves once everything queued before the call has settled, batches in flight included. */
  async flush(): Promise<void> {
    this.#dispatch()
    if (this.#outstanding.size > 0) await Promise.all([...this.#outstanding])
  }

  /**
   * Sends what is queued and waits for it for at most `timeout` ms; then aborts what is left,
   * failing its messages with `ERR_CLOSED`. Releases timers and sockets. Never rejects.
   */
  async close(timeout: number): Promise<void> {
    this.#drain()
    let timedOut = false
    // Past a timer's limit (Infinity included) there is no deadline: setTimeout would otherwise
    // turn it into 1 ms and fail everything at once.
    const timer =
      timeout > MAX_TIMER_MS
        ? undefined
        : setTimeout(() => {
            timedOut = true
            log('close: timeout of %d ms reached, failing %d messages', timeout, this.#queued + this.#inFlight)
            this.#giveUp.abort()
            this.#failWaiting()
          }, timeout).unref()
    await this.flush()
    clearTimeout(timer)
    this.#stopWatchingExit()
    await this.#transport.close(timedOut)
  }

  /** The loop is about to empty, or the client is closing: send everything, let backoffs hold the process. */
  readonly #drain = (): void => {
    this.#draining = true
    for (const timer of this.#backoffTimers) timer.ref()
    this.#pause.holdProcess()
    this.#dispatch()
  }

  /** Hands the batch being filled to the request queue. */
  #dispatch(): void {
    clearTimeout(this.#intervalTimer)
    this.#intervalTimer = undefined
    this.#lastFlushAt = Date.now()
    if (this.#current.count === 0) return
    const batch = this.#current
    const sequence = this.#nextSequence++
    this.#current = new Batch(this.#flushAt)
    this.#waiting.add(batch)
    const settled: Promise<void> = this.#requests
      .add(() => this.#send(batch, sequence))
      .then(undefined, (error: unknown) => {
        // #send settles every message itself and is not expected to throw; if it ever does,
        // the batch's messages must still be reported rather than forgotten.
        log('unexpected error while sending a batch: %O', error)
        const info = { url: this.#transport.url, status: undefined, attempts: 0 }
        this.#settleFailed(
          batch.messages,
          (message) =>
            new DeliveryError(`unexpected error: ${String(error)}`, info, { analyticsMessage: message, cause: error }),
        )
      })
      .finally(() => {
        this.#outstanding.delete(settled)
        if (this.#outstanding.size === 0 && this.#current.count === 0) this.#stopWatchingExit()
      })
    this.#outstanding.add(settled)
  }

  async #send(batch: Batch, sequence: number): Promise<void> {
    // Not waiting any more: failed by #failWaiting while it was queued.
    if (!this.#waiting.delete(batch)) return
    this.#queued -= batch.count
    this.#inFlight += batch.count
    await this.#deliver(batch, sequence)
  }

  /** Sends one batch until it is delivered, split, or failed. */
  async #deliver(batch: Batch, sequence: number): Promise<void> {
    const signal = this.#giveUp.signal
    const firstAttemptAt = Date.now()
    for (let attempts = 1; ; attempts++) {
      if (this.#pause.paused) await this.#pause.wait(sequence)
      if (signal.aborted) return this.#failClosed(batch)
      const buffer = this.#bodies.acquire(batch.bodyBytes)
      const outcome = await this.#transport.send(batch.encodeBody(buffer), signal)
      // Reuse the buffer only after a complete 2xx answer: the server has read the whole body,
      // so no socket write still points into it. After an error or a timeout the dispatcher may
      // still hold it (a write queued, a retry interceptor): the collector takes it then.
      if (outcome.kind === 'response' && outcome.status >= 200 && outcome.status < 300) this.#bodies.release(buffer)
      if (signal.aborted && outcome.kind !== 'response') return this.#failClosed(batch)
      const now = Date.now()
      const decision = decideRetry(
        outcome,
        { attempts, elapsed: now - firstAttemptAt, batchSize: batch.count, now, random: Math.random() },
        this.#policy,
      )
      if (log.enabled) log('flush: %d messages, %d bytes: %s', batch.count, batch.bodyBytes, describeOutcome(outcome))
      switch (decision.action) {
        case 'delivered':
          return this.#settleDelivered(batch.messages)
        case 'split': {
          const [first, second] = batch.split()
          log('split: %d messages into %d and %d after HTTP 413', batch.count, first.count, second.count)
          await this.#deliver(first, sequence)
          return this.#deliver(second, sequence)
        }
        case 'fail': {
          const info = {
            url: this.#transport.url,
            status: outcome.kind === 'response' ? outcome.status : undefined,
            attempts,
          }
          const cause = outcome.kind === 'network-error' ? outcome.error : undefined
          log('drop: %d messages: %s', batch.count, decision.reason)
          return this.#settleFailed(
            batch.messages,
            (message) => new DeliveryError(decision.reason, info, { analyticsMessage: message, cause }),
          )
        }
        case 'retry':
          log(
            'retry: %d messages in %d ms (attempt %d): %s',
            batch.count,
            decision.delay,
            attempts + 1,
            decision.reason,
          )
          // The API's Retry-After holds every batch of the client; the loop's top waits for it.
          if (decision.retryAfter) this.#pause.pause(decision.delay)
          else await this.#backoff(decision.delay)
      }
    }
  }

  /** Waits `ms`, or less if the publisher gives up. */
  #backoff(ms: number): Promise<void> {
    const signal = this.#giveUp.signal
    return new Promise((resolve) => {
      if (signal.aborted) return resolve()
      const done = (): void => {
        clearTimeout(timer)
        this.#backoffTimers.delete(timer)
        signal.removeEventListener('abort', done)
        resolve()
      }
      const timer = setTimeout(done, ms)
      if (!this.#draining) timer.unref()
      this.#backoffTimers.add(timer)
      signal.addEventListener('abort', done, { once: true })
    })
  }

  /** Fails, with ERR_CLOSED, every batch still waiting for a request slot. */
  #failWaiting(): void {
    for (const batch of this.#waiting) {
      this.#queued -= batch.count
      this.#inFlight += batch.count
      this.#failClosed(batch)
    }
    this.#waiting.clear()
  }

  #failClosed(batch: Batch): void {
    log('drop: %d messages: closed before they were delivered', batch.count)
    this.#settleFailed(
      batch.messages,
      (message) =>
        new ClosedError('closeAndFlush() timed out before the message was delivered', { analyticsMessage: message }),
    )
  }

  #settleDelivered(messages: readonly QueuedMessage[]): void {
    this.#inFlight -= messages.length
    this.#delivered += messages.length
    for (const queued of messages) {
      // Parsing back the JSON gives the callback the message exactly as sent, and costs
      // nothing for calls without a callback.
      if (queued.callback !== undefined) this.#report(undefined, JSON.parse(queued.json) as Message, queued.callback)
    }
  }

  #settleFailed(messages: readonly QueuedMessage[], toError: (message: Message) => AnalyticsError): void {
    this.#inFlight -= messages.length
    this.#failed += messages.length
    // Nobody to tell about a message without a callback: spare its parse and its error, which
    // is most of the work when closeAndFlush's deadline fails a large backlog at once.
    const listened = this.#hasErrorListeners()
    for (const queued of messages) {
      if (queued.callback === undefined && !listened) continue
      const message = JSON.parse(queued.json) as Message
      this.#report(
        withoutStack(() => toError(message)),
        message,
        queued.callback,
      )
    }
  }

  #stopWatchingExit(): void {
    if (!this.#watchingExit) return
    this.#watchingExit = false
    this.#draining = false
    unwatchBeforeExit(this.#drain)
  }
}

/**
 * Makes an error without capturing a stack trace. Its stack would show only the publisher's own
 * frames, never the caller's, and capturing one is most of the cost of failing a message: with
 * 100,000 messages failing at closeAndFlush's deadline, it alone overran the deadline by a second.
 * The limit is restored before any callback runs, so the application's own errors keep theirs.
 */
function withoutStack<E>(make: () => E): E {
  const limit = Error.stackTraceLimit
  Error.stackTraceLimit = 0
  try {
    return make()
  } finally {
    Error.stackTraceLimit = limit
  }
}

function describeOutcome(outcome: AttemptOutcome): string {
  switch (outcome.kind) {
    case 'response':
      return `HTTP ${outcome.status}`
    case 'timeout':
      return 'timed out'
    case 'network-error':
      return `network error (${outcome.error instanceof Error ? outcome.error.message : String(outcome.error)})`
  }
}
