import { Agent, type Dispatcher, request } from 'undici'
import { LIBRARY_NAME, LIBRARY_VERSION } from '../shared/version'
import type { AttemptOutcome } from './retry-policy'

export interface TransportOptions {
  endpoint: string
  writeKey: string
  /** One request's limit, in milliseconds. */
  timeout: number
  /** An injected dispatcher, which the transport never closes; otherwise it owns an `Agent`. */
  dispatcher: Dispatcher | undefined
}

/**
 * POSTs batch bodies to `{endpoint}/v1/batch` through undici, with keep-alive. It reports how
 * each attempt ended and never decides about retries (see `decideRetry`).
 */
export class Transport {
  /** The URL every batch goes to. */
  readonly url: string
  /** Headers of every request; the Authorization value is never logged. */
  readonly #headers: Record<string, string>
  readonly #timeout: number
  readonly #dispatcher: Dispatcher
  /** Whether the transport created `#dispatcher` and so must close it. */
  readonly #ownsDispatcher: boolean

  constructor(options: TransportOptions) {
    this.url = `${options.endpoint}/v1/batch`
    this.#headers = {
      authorization: `Basic ${Buffer.from(`${options.writeKey}:`).toString('base64')}`,
      'content-type': 'application/json',
      'user-agent': `${LIBRARY_NAME}/${LIBRARY_VERSION} (node ${process.version})`,
    }
    this.#timeout = options.timeout
    this.#ownsDispatcher = options.dispatcher === undefined
    this.#dispatcher = options.dispatcher ?? new Agent()
  }

  /**
   * Sends one body. Resolves with the outcome — an answer, a network error or a timeout — and
   * never rejects. `signal` aborts the request (the client is closing).
   */
  async send(body: string, signal: AbortSignal): Promise<AttemptOutcome> {
    // One controller per attempt, aborted by the timeout or by `signal`. A plain timer (rather
    // than AbortSignal.timeout) so that fake timers drive it in tests.
    const controller = new AbortController()
    let timedOut = false
    const timer = setTimeout(() => {
      timedOut = true
      controller.abort()
    }, this.#timeout)
    timer.unref()
    const abort = (): void => controller.abort()
    signal.addEventListener('abort', abort, { once: true })
    try {
      const response = await request(this.url, {
        method: 'POST',
        headers: this.#headers,
        body,
        dispatcher: this.#dispatcher,
        signal: controller.signal,
      })
      // Read the answer to its end so the connection goes back to the pool.
      await response.body.dump()
      const retryAfter = response.headers['retry-after']
      return {
        kind: 'response',
        status: response.statusCode,
        retryAfter: Array.isArray(retryAfter) ? retryAfter[0] : retryAfter,
      }
    } catch (error) {
      return timedOut ? { kind: 'timeout' } : { kind: 'network-error', error }
    } finally {
      clearTimeout(timer)
      signal.removeEventListener('abort', abort)
    }
  }

  /**
   * Releases the sockets of the dispatcher the transport created (an injected one is the
   * caller's to close). `force` destroys requests still open instead of waiting for them.
   */
  async close(force: boolean): Promise<void> {
    if (!this.#ownsDispatcher) return
    await (force ? this.#dispatcher.destroy() : this.#dispatcher.close())
  }
}
