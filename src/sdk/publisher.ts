import PQueue from 'p-queue'
import { readApiError } from './api-error'
import { Batch, type QueuedMessage } from './batch'
import { ClosedError, DeliveryError } from './errors'
import { log } from './log'
import { MAX_TIMER_MS } from './options'
import { PauseGate } from './pause-gate'
import { Attempts } from './attempts'
import { BodyWriter, unwatchBeforeExit, watchBeforeExit } from './platform/runtime'
import { type AttemptOutcome, decideRetry, DEFAULT_RETRY_POLICY, type RetryPolicy } from './retry-policy'
import { type BatchErrorMaker, Settlement, type SettlementOptions } from './settlement'
import { ref, type Timer, unref } from './timers'
import type { Transport } from './transport/transport'

/** Requests in flight at once: enough to hide latency, few enough to be kind to the API. */
const MAX_REQUESTS_IN_FLIGHT = 4

export interface PublisherOptions extends SettlementOptions {
  flushAt: number
  flushInterval: number
  maxQueueSize: number
  maxRetries: number
  /** Batch requests started per second at most; `undefined`: no cap. */
  maxRequestsPerSecond: number | undefined
  /** Given a promise per batch, settled (never rejected) once that batch has; `undefined`: none. */
  waitUntil: ((promise: Promise<void>) => void) | undefined
  transport: Transport
}

/** Counters of the publisher's work, for `stats()`. */
export interface PublisherCounts {
  queued: number
  inFlight: number
  delivered: number
  failed: number
  /** HTTP requests made, retries included. */
  requests: number
  /** Requests that were retries of a batch. */
  retries: number
  /** Request body bytes as sent (compressed when `gzip` is on), retries included. */
  bytesSent: number
}

/**
 * Queues accepted messages into batches and sends them: at `flushAt` messages, at the body's
 * byte limit, once `flushInterval` has passed since the last flush (or, with `waitUntil`, at the
 * end of the turn of the event loop that queued them), on `flush()` and `close()`, and when the
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
  readonly #waitUntil: ((promise: Promise<void>) => void) | undefined
  /** Settles messages, counts them, and tells callbacks and `'error'`. */
  readonly #settlement: Settlement
  /** The batch being filled by calls. */
  #current: Batch
  /** Sends `#current` once `flushInterval` has passed since the last flush. */
  #intervalTimer: Timer | undefined
  /** With `waitUntil`: a send at the end of this turn of the event loop is already arranged. */
  #turnEndArranged = false
  /** When the last flush was (or the publisher was made): the interval counts from here. */
  #lastFlushAt = Date.now()
  /** Bounds the requests in flight (and per second, if asked); holds batches waiting for a slot. */
  readonly #requests: PQueue
  /** Writes request bodies, into buffers reused across requests when the transport allows it. */
  readonly #bodies: BodyWriter
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
  readonly #backoffTimers = new Set<Timer>()
  /** Set when the process is about to exit or the client is closing: backoffs then keep the process alive. */
  #draining = false
  /** Whether this publisher is registered for `beforeExit` (it is while it holds messages). */
  #watchingExit = false
  /** Sends each request and counts requests, retries and bytes. */
  readonly #attempts: Attempts

  constructor(options: PublisherOptions) {
    this.#flushAt = options.flushAt
    this.#flushInterval = options.flushInterval
    this.#maxQueueSize = options.maxQueueSize
    this.#policy = { ...DEFAULT_RETRY_POLICY, maxRetries: options.maxRetries }
    this.#transport = options.transport
    this.#attempts = new Attempts(options.transport)
    this.#waitUntil = options.waitUntil
    this.#requests = new PQueue({
      concurrency: MAX_REQUESTS_IN_FLIGHT,
      ...(options.maxRequestsPerSecond === undefined
        ? {}
        : { intervalCap: options.maxRequestsPerSecond, interval: 1000 }),
    })
    this.#bodies = new BodyWriter(this.#transport.reusesBodies ? MAX_REQUESTS_IN_FLIGHT : 0)
    this.#settlement = new Settlement(options)
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

  get counts(): PublisherCounts {
    const { queued, inFlight, delivered, failed } = this.#settlement
    return {
      queued,
      inFlight,
      delivered,
      failed,
      requests: this.#attempts.requests,
      retries: this.#attempts.retries,
      bytesSent: this.#attempts.bytesSent,
    }
  }

  /** Queues an accepted message; `false` when `maxQueueSize` messages are already held. */
  enqueue(message: QueuedMessage): boolean {
    const settlement = this.#settlement
    if (settlement.queued + settlement.inFlight >= this.#maxQueueSize) return false
    if (this.#current.add(message) !== 'added') {
      // The body would pass its byte limit: send what is there, start a new batch with this one.
      this.#dispatch()
      this.#current.add(message)
    }
    settlement.queued++
    if (!this.#watchingExit) {
      this.#watchingExit = true
      watchBeforeExit(this.#drain)
    }
    if (this.#current.isFull) this.#dispatch()
    else if (this.#waitUntil !== undefined) this.#sendAtTurnEnd()
    else if (this.#intervalTimer === undefined) {
      // Armed only while something is queued, so an idle client wakes no one; a message queued
      // after a long quiet spell is sent at once, as the interval has already passed.
      const due = Math.max(0, this.#lastFlushAt + this.#flushInterval - Date.now())
      // Never hold the process for a timer: `beforeExit` sends what is left.
      this.#intervalTimer = unref(setTimeout(() => this.#dispatch(), due))
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
        : unref(
            setTimeout(() => {
              timedOut = true
              const { queued, inFlight } = this.#settlement
              log('close: timeout of %d ms reached, failing %d messages', timeout, queued + inFlight)
              this.#giveUp.abort()
              this.#failWaiting()
            }, timeout),
          )
    await this.flush()
    clearTimeout(timer)
    this.#stopWatchingExit()
    await this.#transport.close(timedOut)
  }

  /** The loop is about to empty, or the client is closing: send everything, let backoffs hold the process. */
  readonly #drain = (): void => {
    this.#draining = true
    for (const timer of this.#backoffTimers) ref(timer)
    this.#pause.holdProcess()
    this.#dispatch()
  }

  /**
   * With `waitUntil`, what this turn of the event loop queued goes at its end, in one batch: a
   * serverless invocation must not end with messages waiting for `flushAt` or `flushInterval`.
   */
  #sendAtTurnEnd(): void {
    if (this.#turnEndArranged) return
    this.#turnEndArranged = true
    queueMicrotask(() => {
      this.#turnEndArranged = false
      this.#dispatch()
    })
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
        this.#settlement.settleFailed(
          batch.messages,
          (message, messages) =>
            new DeliveryError(`unexpected error: ${String(error)}`, info, {
              analyticsMessage: message,
              messages,
              cause: error,
            }),
        )
      })
      .finally(() => {
        this.#outstanding.delete(settled)
        if (this.#outstanding.size === 0 && this.#current.count === 0) this.#stopWatchingExit()
      })
    this.#outstanding.add(settled)
    if (this.#waitUntil !== undefined) this.#handToWaitUntil(settled)
  }

  /** Tells the host (a serverless platform) to keep the invocation alive until `settled`. */
  #handToWaitUntil(settled: Promise<void>): void {
    try {
      this.#waitUntil!(settled)
    } catch (error) {
      // The platform refused (an invocation already over): the batch goes on all the same.
      log('waitUntil threw: %O', error)
    }
  }

  async #send(batch: Batch, sequence: number): Promise<void> {
    // Not waiting any more: failed by #failWaiting while it was queued.
    if (!this.#waiting.delete(batch)) return
    this.#settlement.start(batch.count)
    await this.#deliver(batch, sequence)
  }

  /** Sends one batch until it is delivered, split, or failed. */
  async #deliver(batch: Batch, sequence: number): Promise<void> {
    const signal = this.#giveUp.signal
    const firstAttemptAt = Date.now()
    for (let attempts = 1; ; attempts++) {
      if (this.#pause.paused) await this.#pause.wait(sequence)
      if (signal.aborted) return this.#failClosed(batch)
      const body = this.#bodies.write(batch)
      const outcome = await this.#attempts.send(batch.count, body.bytes, attempts, signal)
      // Reuse the buffer only after a complete 2xx answer: the server has read the whole body,
      // so no socket write still points into it. After an error or a timeout the dispatcher may
      // still hold it (a write queued, a retry interceptor): the collector takes it then.
      if (outcome.kind === 'response' && outcome.status >= 200 && outcome.status < 300) body.release()
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
          return this.#settlement.settleDelivered(batch.messages)
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
            apiError: outcome.kind === 'response' ? readApiError(outcome.body) : undefined,
          }
          const cause = outcome.kind === 'network-error' ? outcome.error : undefined
          log('drop: %d messages: %s', batch.count, decision.reason)
          return this.#settlement.settleFailed(
            batch.messages,
            (message, messages) =>
              new DeliveryError(decision.reason, info, { analyticsMessage: message, messages, cause }),
          )
        }
        case 'retry':
          this.#attempts.retries++
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
      if (!this.#draining) unref(timer)
      this.#backoffTimers.add(timer)
      signal.addEventListener('abort', done, { once: true })
    })
  }

  /** Fails, with ERR_CLOSED, every batch still waiting for a request slot. */
  #failWaiting(): void {
    for (const batch of this.#waiting) {
      this.#settlement.start(batch.count)
      this.#failClosed(batch)
    }
    this.#waiting.clear()
  }

  #failClosed(batch: Batch): void {
    log('drop: %d messages: closed before they were delivered', batch.count)
    const closed: BatchErrorMaker = (message, messages) =>
      new ClosedError('closeAndFlush() timed out before the message was delivered', {
        analyticsMessage: message,
        messages,
      })
    this.#settlement.settleFailed(batch.messages, closed)
  }

  #stopWatchingExit(): void {
    if (!this.#watchingExit) return
    this.#watchingExit = false
    this.#draining = false
    unwatchBeforeExit(this.#drain)
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
