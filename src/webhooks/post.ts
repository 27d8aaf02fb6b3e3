import createDebug from 'debug'
import { type Dispatcher, getGlobalDispatcher } from 'undici'
import { redactUrl } from '../shared/redact-url'
import { parseRetryAfter } from './retry-after'

const debug = createDebug('tracklet:webhooks')

/** How one URL fared in one attempt: `status` when the receiver answered, `error` when it did not. */
export interface DeliveryAttempt {
  /** The webhook's URL, as configured. */
  url: string
  /** The HTTP status the receiver answered with. */
  status?: number
  /**
   * Why no answer came, for people: a timeout (`timed out after 5000 ms`), a network or TLS
   * error with its code (`connect ECONNREFUSED 127.0.0.1:8080 (ECONNREFUSED)`,
   * `self-signed certificate (DEPTH_ZERO_SELF_SIGNED_CERT)`), or the reason a custom
   * dispatcher's `connect` refused the connection.
   */
  error?: string
  /** The underlying error's `code` when it has one (`ECONNREFUSED`, `ERR_WEBHOOK_TIMEOUT`, …). */
  code?: string
  /** How long the request took, in milliseconds, until the response headers or the error. */
  ms: number
  /** The receiver's `Retry-After`, in milliseconds, when it sent one with a failure status. */
  retryAfterMs?: number
  /**
   * The start of the receiver's answer to a request that failed with a status (not 2xx): at most
   * `responseBodyLimit` bytes, decoded as UTF-8 (a character cut at the limit shows as `�`).
   */
  responseBody?: string
  /**
   * The headers of a request that failed, as they may be shown: signatures as `(present)`, the
   * values of configured headers as `(redacted)` (they may be credentials).
   */
  requestHeaders?: Record<string, string>
}

/** One POST, as the destination makes it. */
export interface PostRequest {
  url: string
  /** The URL's origin (`https://hooks.example.com`), taken apart once with the settings. */
  origin: string
  /** The URL's path and query (`/tracklet?team=growth`). */
  path: string
  headers: Record<string, string>
  body: Uint8Array
  timeout: number
  dispatcher: Dispatcher | undefined
  /** How much of a failed request's answer to keep, bytes (0: none). */
  responseBodyLimit: number
  /** The headers as a failed attempt shows them (made only when one fails). */
  shownHeaders: () => Record<string, string>
}

/** The code of an attempt that got no answer within the timeout. */
export const TIMEOUT_CODE = 'ERR_WEBHOOK_TIMEOUT'
// How much of a response body is drained so the connection can be reused; past this the socket is
// destroyed instead. A 2xx answer is read and thrown away; of a failure's, the start is kept.
const DRAIN_LIMIT_BYTES = 64 * 1024

/**
 * POSTs the body once and reports how it went; never rejects. Redirects are not followed. The
 * timeout covers connecting and waiting for the response; on expiry the request is aborted, which
 * destroys its socket, so a receiver that never answers holds nothing.
 */
export function post(req: PostRequest): Promise<DeliveryAttempt> {
  return new Promise((resolve) => new Exchange(req, resolve).start())
}

// Every webhook request goes through here, so it is a dispatch handler of its own rather than
// undici's `request()`: no AbortController and listener per request (the timer aborts through
// the function undici hands over), no response stream to drain; the body is counted as it comes.
// Its callbacks are the ones every undici since 5 takes (onConnect, onHeaders, …): the global
// dispatcher may be the undici bundled in Node 20 and 22 (6.x), installed by a `fetch()` made
// before this module loaded, which refuses a handler of undici 7's newer callbacks alone.
class Exchange implements Dispatcher.DispatchHandler {
  readonly #req: PostRequest
  readonly #resolve: (attempt: DeliveryAttempt) => void
  readonly #started = performance.now()
  #timer: NodeJS.Timeout | undefined
  /** Aborts the request once undici has started it on a connection: what the timeout calls. */
  #abort: ((reason: Error) => void) | undefined
  #timedOut = false
  #settled = false
  /** Set once the response headers came: the attempt the body is read for. */
  #attempt: DeliveryAttempt | undefined
  /** The start of a failed answer's body (`undefined`: a 2xx or no limit, drained unread). */
  #kept: Buffer[] | undefined
  #keptBytes = 0
  #seen = 0

  constructor(req: PostRequest, resolve: (attempt: DeliveryAttempt) => void) {
    this.#req = req
    this.#resolve = resolve
  }

  start(): void {
    const req = this.#req
    this.#timer = setTimeout(expire, req.timeout, this)
    try {
      ;(req.dispatcher ?? getGlobalDispatcher()).dispatch(
        { origin: req.origin, path: req.path, method: 'POST', headers: req.headers, body: req.body },
        this,
      )
    } catch (error) {
      this.onError(error as Error)
    }
  }

  /**
   * The timeout ran out: abort the request. One still connecting (or waiting for a connection)
   * has no handle to abort yet: the attempt ends now all the same, and undici's request is aborted
   * as soon as it starts, before anything is written (onConnect).
   */
  expire(): void {
    this.#timedOut = true
    if (this.#abort === undefined) this.onError(this.#timeoutError())
    else this.#abort(this.#timeoutError())
  }

  onConnect(abort: (reason?: Error) => void): void {
    this.#abort = abort
    if (this.#timedOut) abort(this.#timeoutError())
  }

  #timeoutError(): Error {
    return new Error(`timed out after ${this.#req.timeout} ms`)
  }

  onHeaders(statusCode: number, rawHeaders: Buffer[]): boolean {
    // An informational answer (100 Continue): the real one follows.
    if (statusCode < 200) return true
    const req = this.#req
    const attempt: DeliveryAttempt = { url: req.url, status: statusCode, ms: elapsed(this.#started) }
    if (statusCode >= 300) {
      const retryAfterMs = parseRetryAfter(headerValue(rawHeaders, 'retry-after'), Date.now())
      if (retryAfterMs !== undefined) attempt.retryAfterMs = retryAfterMs
      attempt.requestHeaders = req.shownHeaders()
      if (req.responseBodyLimit > 0) this.#kept = []
    }
    this.#attempt = attempt
    // Like a drain with a limit: a body announced larger than it is not read at all.
    if (this.#kept === undefined && Number(headerValue(rawHeaders, 'content-length')) > DRAIN_LIMIT_BYTES) {
      this.#stopReading()
    }
    return true
  }

  onData(chunk: Buffer): boolean {
    if (this.#settled) return true
    const kept = this.#kept
    const limit = this.#req.responseBodyLimit
    if (kept !== undefined && this.#keptBytes < limit) {
      // A copy: a slice would hold the whole chunk in memory.
      const piece = Buffer.from(chunk.subarray(0, limit - this.#keptBytes))
      kept.push(piece)
      this.#keptBytes += piece.length
    }
    this.#seen += chunk.length
    if (this.#seen > DRAIN_LIMIT_BYTES) this.#stopReading()
    return true
  }

  onComplete(): void {
    this.#answered()
  }

  onError(error: Error): void {
    if (this.#settled) return
    const req = this.#req
    if (this.#attempt !== undefined) {
      // The answer came; its body broke off (the timeout, a reset): keep what came before.
      const doing = this.#kept === undefined ? 'discarding' : 'reading'
      if (debug.enabled) {
        debug('%s the response body of %s failed: %s', doing, redactUrl(req.url), describeError(error).error)
      }
      this.#answered()
      return
    }
    const ms = elapsed(this.#started)
    const described = this.#timedOut
      ? { error: `timed out after ${req.timeout} ms without a response`, code: TIMEOUT_CODE }
      : describeError(error)
    if (debug.enabled) debug('POST %s failed after %d ms: %s', redactUrl(req.url), ms, described.error)
    this.#settle({ url: req.url, ...described, ms, requestHeaders: req.shownHeaders() })
  }

  // Past the drain limit: the socket is destroyed rather than read on; the answer is what came.
  #stopReading(): void {
    this.#answered()
    this.#abort?.(new Error('the response body is past the drain limit'))
  }

  #answered(): void {
    if (this.#settled) return
    const attempt = this.#attempt!
    if (this.#kept !== undefined) {
      const start = new TextDecoder().decode(Buffer.concat(this.#kept, this.#keptBytes))
      if (start !== '') attempt.responseBody = start
    }
    // Guarded: the common path should not parse the URL for a log line nobody reads.
    if (debug.enabled) debug('POST %s → %d in %d ms', redactUrl(this.#req.url), attempt.status, attempt.ms)
    this.#settle(attempt)
  }

  #settle(attempt: DeliveryAttempt): void {
    this.#settled = true
    clearTimeout(this.#timer)
    this.#resolve(attempt)
  }
}

// The value of header `name` (lower case) in undici's raw headers (name, value, name, value… as
// bytes), or undefined. Only the two headers read here are looked for, so none is decoded for nothing.
function headerValue(rawHeaders: Buffer[], name: string): string | undefined {
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    const key = rawHeaders[i]!
    if (key.length === name.length && key.toString('latin1').toLowerCase() === name) {
      return rawHeaders[i + 1]!.toString('latin1')
    }
  }
  return undefined
}

// One function for every request's timer (the request rides along as its argument): no closure each.
function expire(exchange: Exchange): void {
  exchange.expire()
}

function elapsed(started: number): number {
  return Math.round(performance.now() - started)
}

/**
 * A network error as a sentence naming each cause and its code, such as
 * `connect ECONNREFUSED 127.0.0.1:9 (ECONNREFUSED)`.
 */
export function describeError(error: unknown): { error: string; code?: string } {
  const parts: string[] = []
  let code: string | undefined
  let current: unknown = error
  for (let depth = 0; depth < 5 && current !== undefined && current !== null; depth++) {
    const ownCode = codeOf(current)
    code ??= ownCode
    const text = messageOf(current)
    parts.push(ownCode !== undefined && !text.includes(ownCode) ? `${text} (${ownCode})` : text)
    current = (current as { cause?: unknown }).cause
  }
  let text = parts.join(': ')
  if (code !== undefined && CERTIFICATE_PROBLEM.test(code)) text += ` — ${UNTRUSTED_CERTIFICATE_HINT}`
  return code === undefined ? { error: text } : { error: text, code }
}

// Node's codes for a certificate that does not verify (self-signed, unknown issuer, wrong host…).
const CERTIFICATE_PROBLEM = /CERT|SELF_SIGNED|UNABLE_TO_(GET|VERIFY)/
const UNTRUSTED_CERTIFICATE_HINT =
  "the receiver's certificate is not trusted, so nothing was sent (TLS verification is never turned off; " +
  'use a certificate from a public CA, or trust a private CA through the dispatcher option)'

function codeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown }).code
  return typeof code === 'string' && code !== '' ? code : undefined
}

function messageOf(error: unknown): string {
  if (error instanceof AggregateError && error.message === '') {
    // Node's happy-eyeballs connect fails with one error per address and no message of its own.
    return error.errors.map(messageOf).join('; ')
  }
  if (error instanceof Error) return error.message || error.name
  return String(error)
}
