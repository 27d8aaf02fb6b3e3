import type { AttemptOutcome } from '../retry-policy'

/** What every transport is made with. */
export interface TransportOptions {
  /** Where batches are posted: `{endpoint}{path}`. */
  url: string
  writeKey: string
  /** One request's limit, in milliseconds. */
  timeout: number
  /** Whether bodies are sent gzip-compressed, with `Content-Encoding: gzip`. */
  gzip: boolean
  /** A `User-Agent` naming the library, its version and the runtime. */
  userAgent: string
}

/**
 * POSTs batch bodies and reports how each attempt ended; it never decides about retries (see
 * `decideRetry`). One per client: undici's dispatcher on Node, `fetch` elsewhere.
 */
export interface Transport {
  /** The URL every batch goes to. */
  readonly url: string
  /**
   * Whether nothing keeps a request's body once a 2xx answer has come (so the body's buffer may be
   * written again by a later request): true only for a connection pool the transport made itself.
   */
  readonly reusesBodies: boolean
  /**
   * Sends one body (`{"batch":[...]}` as UTF-8), compressed first when `gzip` is on. Resolves with
   * the outcome, never rejects. `signal` aborts the request (the client is closing).
   */
  send(body: Uint8Array, signal: AbortSignal): Promise<AttemptOutcome>
  /** Releases what the transport holds (sockets); `force` ends requests still open. Never rejects. */
  close(force: boolean): Promise<void>
}

/** The most of an answer's body kept for the error a refused batch reports (the API's reason). */
export const ANSWER_EXCERPT_BYTES = 4096

/** The headers of every request; the Authorization value is never logged. */
export function requestHeaders(options: TransportOptions): Record<string, string> {
  const headers: Record<string, string> = {
    authorization: `Basic ${base64(`${options.writeKey}:`)}`,
    'content-type': 'application/json',
    'user-agent': options.userAgent,
  }
  if (options.gzip) headers['content-encoding'] = 'gzip'
  return headers
}

/** Base64 of the UTF-8 bytes of `text`, with what every runtime has (`btoa` takes Latin-1 only). */
function base64(text: string): string {
  let binary = ''
  for (const byte of new TextEncoder().encode(text)) binary += String.fromCharCode(byte)
  return btoa(binary)
}

/** Whether an answer's body is worth keeping: a refusal (not 2xx), whose body says why. */
export function keepsAnswerBody(status: number): boolean {
  return status < 200 || status >= 300
}
