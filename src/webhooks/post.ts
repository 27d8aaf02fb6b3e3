import createDebug from 'debug'
import { request, type Dispatcher } from 'undici'
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
  target: URL
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
// destroyed instead. A 2xx answer is not read; of a failure's, the start is kept.
const DRAIN_LIMIT_BYTES = 64 * 1024

/**
 * POSTs the body once and reports how it went; never rejects. Redirects are not followed. The
 * timeout covers connecting and waiting for the response; on expiry the request is aborted, which
 * destroys its socket, so a receiver that never answers holds nothing.
 */
export async function post(req: PostRequest): Promise<DeliveryAttempt> {
  const started = performance.now()
  const controller = new AbortController()
  const timer = setTimeout(() => controller.abort(), req.timeout)
  try {
    const response = await request(req.target, {
      method: 'POST',
      headers: req.headers,
      body: req.body,
      signal: controller.signal,
      ...(req.dispatcher === undefined ? {} : { dispatcher: req.dispatcher }),
    })
    const attempt: DeliveryAttempt = { url: req.url, status: response.statusCode, ms: elapsed(started) }
    const failed = response.statusCode < 200 || response.statusCode >= 300
    const retryAfterMs =
      response.statusCode >= 300 ? parseRetryAfter(response.headers['retry-after'], Date.now()) : undefined
    if (retryAfterMs !== undefined) attempt.retryAfterMs = retryAfterMs
    if (failed) attempt.requestHeaders = req.shownHeaders()
    if (failed && req.responseBodyLimit > 0) {
      const start = await readStart(response.body, req.responseBodyLimit, req.url)
      if (start !== '') attempt.responseBody = start
    } else {
      // Release the connection: drain a small body, destroy the socket under a large or slow one.
      await response.body.dump({ limit: DRAIN_LIMIT_BYTES, signal: controller.signal }).catch((error: unknown) => {
        debug('discarding the response body of %s failed: %s', redactUrl(req.url), describeError(error).error)
      })
    }
    // Guarded: the common path should not parse the URL for a log line nobody reads.
    if (debug.enabled) debug('POST %s → %d in %d ms', redactUrl(req.url), attempt.status, attempt.ms)
    return attempt
  } catch (error) {
    const ms = elapsed(started)
    const described = controller.signal.aborted
      ? { error: `timed out after ${req.timeout} ms without a response`, code: TIMEOUT_CODE }
      : describeError(error)
    debug('POST %s failed after %d ms: %s', redactUrl(req.url), ms, described.error)
    return { url: req.url, ...described, ms, requestHeaders: req.shownHeaders() }
  } finally {
    clearTimeout(timer)
  }
}

/**
 * Reads the first `limit` bytes of a body, copying no more than that, and reads on (discarding) to
 * {@link DRAIN_LIMIT_BYTES} so the connection can be reused; past that, stops, which destroys the
 * socket. A body that fails midway (the timeout, a reset) keeps what came before.
 */
async function readStart(body: AsyncIterable<Buffer>, limit: number, url: string): Promise<string> {
  const kept: Buffer[] = []
  let keptBytes = 0
  let seen = 0
  try {
    for await (const chunk of body) {
      if (keptBytes < limit) {
        // A copy: a slice would hold the whole chunk in memory.
        const piece = Buffer.from(chunk.subarray(0, limit - keptBytes))
        kept.push(piece)
        keptBytes += piece.length
      }
      seen += chunk.length
      if (seen > DRAIN_LIMIT_BYTES) break
    }
  } catch (error) {
    debug('reading the response body of %s failed: %s', redactUrl(url), describeError(error).error)
  }
  return new TextDecoder().decode(Buffer.concat(kept, keptBytes))
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
