import { promisify } from 'node:util'
import { gzip } from 'node:zlib'
import type { Agent, Dispatcher } from 'undici'
import { log } from '../log'
import { unref } from '../timers'
import type { AttemptOutcome } from '../retry-policy'
import {
  ANSWER_EXCERPT_BYTES,
  keepsAnswerBody,
  requestHeaders,
  type Transport,
  type TransportOptions,
} from './transport'

/** The Node transport's options: an injected undici dispatcher, or none (the transport makes its own). */
export interface UndiciTransportOptions extends TransportOptions {
  /** An injected dispatcher, which the transport never closes; otherwise it owns an `Agent`. */
  dispatcher: Dispatcher | undefined
}

// Compressed on libuv's thread pool, off the application's event loop.
const gzipAsync = promisify(gzip)

/**
 * undici's `Agent`, loaded at the first request rather than at import: undici's whole entry costs
 * about 100 ms to load, most of `import('tracklet')`, which a serverless cold start pays before
 * its handler runs. The Agent's own module is a quarter of that; undici 7 has no `exports` map,
 * so its path is importable, and if a later undici moves it, the whole entry is loaded instead.
 */
let agentClass: Promise<typeof Agent> | undefined
function loadAgent(): Promise<typeof Agent> {
  agentClass ??= import(AGENT_MODULE).then(
    (module: { default: typeof Agent }) => module.default,
    () => import('undici').then((undici) => undici.Agent),
  )
  return agentClass
}
// A variable, so that the bundler leaves the path to Node's resolution at run time.
const AGENT_MODULE = 'undici/lib/dispatcher/agent.js'

/**
 * POSTs batch bodies to `{endpoint}{path}` through undici, with keep-alive. It reports how
 * each attempt ended and never decides about retries (see `decideRetry`).
 */
export class UndiciTransport implements Transport {
  readonly url: string
  readonly reusesBodies: boolean
  readonly #origin: string
  readonly #path: string
  readonly #headers: Record<string, string>
  readonly #gzip: boolean
  readonly #timeout: number
  /** The injected dispatcher, or the Agent made at the first request. */
  #dispatcher: Dispatcher | undefined
  #making: Promise<Dispatcher> | undefined

  constructor(options: UndiciTransportOptions) {
    this.url = options.url
    const url = new URL(this.url)
    this.#origin = url.origin
    this.#path = url.pathname
    this.#headers = requestHeaders(options)
    this.#gzip = options.gzip
    this.#timeout = options.timeout
    this.#dispatcher = options.dispatcher
    // Only then is it known that nothing keeps a request's body after the answer (an injected
    // `MockAgent` records bodies, an interceptor may log them later).
    this.reusesBodies = options.dispatcher === undefined
  }

  send(body: Uint8Array, signal: AbortSignal): Promise<AttemptOutcome> {
    if (!this.#gzip) return this.#post(body, signal)
    return gzipAsync(body).then(
      (compressed) =>
        // Closed while compressing: the abort event has fired already, so say so here.
        signal.aborted
          ? { kind: 'network-error', error: new Error('the client is closing') }
          : this.#post(compressed, signal),
      (error: unknown) => ({ kind: 'network-error', error }),
    )
  }

  #post(body: Uint8Array, signal: AbortSignal): Promise<AttemptOutcome> {
    const dispatcher = this.#dispatcher
    if (dispatcher !== undefined) return this.#dispatch(dispatcher, body, signal)
    return this.#agent().then(
      (agent) => this.#dispatch(agent, body, signal),
      (error: unknown) => ({ kind: 'network-error', error }),
    )
  }

  #agent(): Promise<Dispatcher> {
    this.#making ??= loadAgent().then((Agent) => {
      // Connecting counts against the request's timeout too (undici's own default is 10 s).
      this.#dispatcher = new Agent({ connect: { timeout: this.#timeout } })
      return this.#dispatcher
    })
    return this.#making
  }

  #dispatch(dispatcher: Dispatcher, body: Uint8Array, signal: AbortSignal): Promise<AttemptOutcome> {
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
      /** A refusal's body, up to ANSWER_EXCERPT_BYTES; undefined for a 2xx (read and dropped). */
      let answer: Uint8Array[] | undefined
      let answerBytes = 0
      let settled = false

      const finish = (outcome: AttemptOutcome): void => {
        if (settled) return
        settled = true
        clearTimeout(timer)
        signal.removeEventListener('abort', onClose)
        if (controller !== undefined) outcome.sent = body.length
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
      unref(timer)
      signal.addEventListener('abort', onClose, { once: true })

      try {
        dispatcher.dispatch(
          { origin: this.#origin, path: this.#path, method: 'POST', headers: this.#headers, body },
          {
            onRequestStart(started) {
              controller = started
              if (pendingAbort !== undefined) started.abort(pendingAbort)
            },
            onResponseStart(_controller, statusCode, headers) {
              status = statusCode
              const value = headers['retry-after']
              retryAfter = Array.isArray(value) ? value[0] : value
              if (keepsAnswerBody(statusCode)) answer = []
            },
            // A 2xx answer's body is read and dropped, so the connection goes back to the pool;
            // a refusal's first bytes are kept: they say why.
            onResponseData(_controller, chunk) {
              if (answer === undefined || answerBytes >= ANSWER_EXCERPT_BYTES) return
              const kept = chunk.subarray(0, ANSWER_EXCERPT_BYTES - answerBytes)
              answer.push(kept)
              answerBytes += kept.length
            },
            onResponseEnd() {
              finish({ kind: 'response', status, retryAfter, body: decodeExcerpt(answer) })
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

  async close(force: boolean): Promise<void> {
    // An injected dispatcher is the caller's to close; none made yet: nothing to release.
    if (!this.reusesBodies || this.#making === undefined) return
    try {
      const dispatcher = await this.#making
      await (force ? dispatcher.destroy() : dispatcher.close())
    } catch (error) {
      // Every message has settled by now: a socket that fails to close is only worth a log line,
      // and closeAndFlush() must not reject.
      log('closing the connection pool failed: %O', error)
    }
  }
}

function decodeExcerpt(chunks: Uint8Array[] | undefined): string | undefined {
  if (chunks === undefined || chunks.length === 0) return undefined
  return new TextDecoder().decode(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks))
}
