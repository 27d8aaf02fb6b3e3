import { promisify } from 'node:util'
import { gzip } from 'node:zlib'
import { Agent, type Dispatcher } from 'undici'
import { LIBRARY_NAME, LIBRARY_VERSION } from '../shared/version'
import { log } from './log'
import type { AttemptOutcome } from './retry-policy'

export interface TransportOptions {
  /** Where batches are posted: `{endpoint}{path}`. */
  url: string
  writeKey: string
  /** One request's limit, in milliseconds. */
  timeout: number
  /** An injected dispatcher, which the transport never closes; otherwise it owns an `Agent`. */
  dispatcher: Dispatcher | undefined
  /** Whether bodies are sent gzip-compressed, with `Content-Encoding: gzip`. */
  gzip: boolean
}

// Compressed on libuv's thread pool, off the application's event loop.
const gzipAsync = promisify(gzip)

/**
 * POSTs batch bodies to `{endpoint}{path}` through undici, with keep-alive. It reports how
 * each attempt ended and never decides about retries (see `decideRetry`).
 */
export class Transport {
  /** The URL every batch goes to. */
  readonly url: string
  readonly #origin: string
  readonly #path: string
  /** Headers of every request; the Authorization value is never logged. */
  readonly #headers: Record<string, string>
  /** The same headers with `Content-Encoding: gzip`; `undefined` when bodies are sent as is. */
  readonly #gzipHeaders: Record<string, string> | undefined
  readonly #timeout: number
  readonly #dispatcher: Dispatcher
  /** Whether the transport created `#dispatcher` and so must close it. */
  readonly #ownsDispatcher: boolean

  /**
   * Whether the transport created its dispatcher. Only then is it known that nothing keeps a
   * request's body after the answer (an injected `MockAgent` records bodies, an interceptor may
   * log them later), which is what reusing body buffers needs.
   */
  get ownsDispatcher(): boolean {
    return this.#ownsDispatcher
  }

  constructor(options: TransportOptions) {
    this.url = options.url
    const url = new URL(this.url)
    this.#origin = url.origin
    this.#path = url.pathname
    this.#headers = {
      authorization: `Basic ${Buffer.from(`${options.writeKey}:`).toString('base64')}`,
      'content-type': 'application/json',
      'user-agent': `${LIBRARY_NAME}/${LIBRARY_VERSION} (node ${process.version})`,
    }
    this.#gzipHeaders = options.gzip ? { ...this.#headers, 'content-encoding': 'gzip' } : undefined
    this.#timeout = options.timeout
    this.#ownsDispatcher = options.dispatcher === undefined
    // Connecting counts against the request's timeout too (undici's own default is 10 s).
    this.#dispatcher = options.dispatcher ?? new Agent({ connect: { timeout: options.timeout } })
  }

  /**
   * Sends one body (`{"batch":[...]}` as UTF-8), gzip-compressed first when the client was made
   * with `gzip: true`. Resolves with the outcome — an answer, a network error or a timeout — and
   * never rejects. `signal` aborts the request (the client is closing).
   */
  send(body: Buffer, signal: AbortSignal): Promise<AttemptOutcome> {
    if (this.#gzipHeaders === undefined) return this.#post(body, this.#headers, signal)
    const headers = this.#gzipHeaders
    return gzipAsync(body).then(
      (compressed) =>
        // Closed while compressing: the abort event has fired already, so say so here.
        signal.aborted
          ? { kind: 'network-error', error: new Error('the client is closing') }
          : this.#post(compressed, headers, signal),
      (error: unknown) => ({ kind: 'network-error', error }),
    )
  }

  #post(body: Buffer, headers: Record<string, string>, signal: AbortSignal): Promise<AttemptOutcome> {
    // `dispatch` with a small handler rather than `request()`: no response stream, no signal
    // plumbing inside undici — a few tens of microseconds less per request, which is most of
    // the cost of a small batch.
    return new Promise((resolve) => {
      let controller: Dispatcher.DispatchController | undefined
      /** Why the request was aborted before undici handed over its controller. */
      let pendingAbort: Error | undefined
      let timedOut = false
      let status = 0
      let retryAfter: string | undefined
      let settled = false

      const finish = (outcome: AttemptOutcome): void => {
        if (settled) return
        settled = true
        clearTimeout(timer)
        signal.removeEventListener('abort', onClose)
        resolve(outcome)
      }
      const abort = (reason: Error, outcome: AttemptOutcome): void => {
        if (controller !== undefined) {
          controller.abort(reason)
          return
        }
        // Still connecting: undici hands over its controller only once the connection is up,
        // which can take until its own connect timeout. Settle now, so neither the request's
        // timeout nor closeAndFlush's deadline waits for that; the request is aborted the moment
        // it starts, so it is never sent.
        pendingAbort = reason
        finish(outcome)
      }
      const onClose = (): void => {
        const reason = new Error('the client is closing')
        abort(reason, { kind: 'network-error', error: reason })
      }
      // A plain timer (rather than undici's own timeouts) limits the whole request, and fake
      // timers drive it in tests.
      const timer = setTimeout(() => {
        timedOut = true
        abort(new Error(`request timed out after ${this.#timeout} ms`), { kind: 'timeout' })
      }, this.#timeout)
      timer.unref()
      signal.addEventListener('abort', onClose, { once: true })

      try {
        this.#dispatcher.dispatch(
          { origin: this.#origin, path: this.#path, method: 'POST', headers, body },
          {
            onRequestStart(started) {
              controller = started
              if (pendingAbort !== undefined) started.abort(pendingAbort)
            },
            onResponseStart(_controller, statusCode, headers) {
              status = statusCode
              const value = headers['retry-after']
              retryAfter = Array.isArray(value) ? value[0] : value
            },
            // The answer's body is read and dropped, so the connection goes back to the pool.
            onResponseData() {},
            onResponseEnd() {
              finish({ kind: 'response', status, retryAfter })
            },
            onResponseError(_controller, error) {
              finish(timedOut ? { kind: 'timeout' } : { kind: 'network-error', error })
            },
          },
        )
      } catch (error) {
        finish({ kind: 'network-error', error })
      }
    })
  }

  /**
   * Releases the sockets of the dispatcher the transport created (an injected one is the
   * caller's to close). `force` destroys requests still open instead of waiting for them.
   */
  async close(force: boolean): Promise<void> {
    if (!this.#ownsDispatcher) return
    try {
      await (force ? this.#dispatcher.destroy() : this.#dispatcher.close())
    } catch (error) {
      // Every message has settled by now: a socket that fails to close is only worth a log line,
      // and closeAndFlush() must not reject.
      log('closing the connection pool failed: %O', error)
    }
  }
}
