import { Agent, type Dispatcher } from 'undici'

// The most of a refusal's body kept: an error message, not a page.
const MAX_BODY_BYTES = 4096

/**
 * An undici `Agent` for `tracklet send` that remembers what the SDK does not report: the body of
 * the last 4xx answer (where a relay says why it refused the batch) and the last network error
 * (`ECONNREFUSED`, a DNS failure), which a `--timeout` would otherwise hide behind `ERR_CLOSED`.
 * The SDK's own transport is unchanged: this only watches its requests go by.
 */
export class ObservedAgent {
  /** The dispatcher to give the SDK (`dispatcher` option). */
  readonly dispatcher: Dispatcher
  /** The last answer with a 4xx status, and its body (truncated), if any. */
  lastRefusal: { status: number; body: string } | undefined
  /** The last request's network error, if the last request had one. */
  lastNetworkError: Error | undefined
  readonly #agent = new Agent()

  constructor() {
    this.dispatcher = this.#agent.compose((dispatch) => (options, handler) => dispatch(options, this.#watch(handler)))
  }

  /** Closes the agent's sockets (the SDK never closes a dispatcher it was given). */
  close(): Promise<void> {
    return this.#agent.destroy()
  }

  #watch(handler: Dispatcher.DispatchHandler): Dispatcher.DispatchHandler {
    let status = 0
    const chunks: Buffer[] = []
    let size = 0
    return {
      onRequestStart: (controller, context) => handler.onRequestStart?.(controller, context),
      onRequestUpgrade: (controller, statusCode, headers, socket) =>
        handler.onRequestUpgrade?.(controller, statusCode, headers, socket),
      onResponseStart: (controller, statusCode, headers, statusMessage) => {
        status = statusCode
        this.lastNetworkError = undefined
        handler.onResponseStart?.(controller, statusCode, headers, statusMessage)
      },
      onResponseData: (controller, chunk) => {
        if (status >= 400 && status < 500 && size < MAX_BODY_BYTES) {
          chunks.push(chunk)
          size += chunk.length
        }
        handler.onResponseData?.(controller, chunk)
      },
      onResponseEnd: (controller, trailers) => {
        if (status >= 400 && status < 500) {
          this.lastRefusal = { status, body: Buffer.concat(chunks).subarray(0, MAX_BODY_BYTES).toString('utf8') }
        }
        handler.onResponseEnd?.(controller, trailers)
      },
      onResponseError: (controller, error) => {
        // A network failure carries a code (ECONNREFUSED, UND_ERR_…); the SDK's own aborts (its
        // per-request timeout, the client closing) do not, and must not hide the real cause.
        if (status === 0 && typeof (error as Error & { code?: unknown }).code === 'string')
          this.lastNetworkError = error
        handler.onResponseError?.(controller, error)
      },
    }
  }
}

/**
 * What a refusal's body says, as one line: the `error.message` (or `error`, or `message`) of a
 * JSON answer such as the relay's, else the start of the text.
 */
export function refusalReason(body: string): string {
  let reason: unknown
  try {
    const parsed = JSON.parse(body) as Record<string, unknown>
    const error = parsed['error']
    reason =
      typeof error === 'object' && error !== null
        ? (error as Record<string, unknown>)['message']
        : (error ?? parsed['message'])
  } catch {
    reason = body
  }
  const text = typeof reason === 'string' ? reason.replace(/\s+/g, ' ').trim() : ''
  return text.length > 300 ? `${text.slice(0, 300)}…` : text
}
