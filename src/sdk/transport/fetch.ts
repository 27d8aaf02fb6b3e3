import type { AttemptOutcome } from '../retry-policy'
import {
  ANSWER_EXCERPT_BYTES,
  keepsAnswerBody,
  requestHeaders,
  type Transport,
  type TransportOptions,
} from './transport'

/**
 * POSTs batch bodies with the runtime's own `fetch`: the transport of the builds for Bun, Deno,
 * Cloudflare Workers and Vercel Edge, which have no undici (Bun's shim has no `dispatch()`, and
 * Workers and Edge load no Node modules). Gzip goes through `CompressionStream`. Like the undici
 * transport it reports how each attempt ended and never decides about retries.
 */
export class FetchTransport implements Transport {
  readonly url: string
  // fetch may hold the body after answering (a runtime's own retry, a cache): never reuse it.
  readonly reusesBodies = false
  readonly #headers: Record<string, string>
  readonly #gzip: boolean
  readonly #timeout: number
  /** Requests still open, so that `close(true)` can end them. */
  readonly #open = new Set<AbortController>()

  constructor(options: TransportOptions) {
    this.url = options.url
    this.#headers = requestHeaders(options)
    this.#gzip = options.gzip
    this.#timeout = options.timeout
  }

  async send(body: Uint8Array, signal: AbortSignal): Promise<AttemptOutcome> {
    const request = new AbortController()
    let timedOut = false
    // One timer limits the whole request, compression and the answer's body included.
    const timer = setTimeout(() => {
      timedOut = true
      request.abort(new Error(`request timed out after ${this.#timeout} ms`))
    }, this.#timeout)
    const onClose = (): void => request.abort(new Error('the client is closing'))
    signal.addEventListener('abort', onClose, { once: true })
    this.#open.add(request)
    try {
      if (signal.aborted) throw new Error('the client is closing')
      const payload = this.#gzip ? await gzipped(body) : body
      const response = await fetch(this.url, {
        method: 'POST',
        headers: this.#headers,
        body: payload,
        signal: request.signal,
        redirect: 'manual',
      })
      const answer = keepsAnswerBody(response.status) ? await excerpt(response) : await drain(response)
      return {
        kind: 'response',
        sent: payload.length,
        status: response.status,
        retryAfter: response.headers.get('retry-after') ?? undefined,
        body: answer,
      }
    } catch (error) {
      return timedOut ? { kind: 'timeout' } : { kind: 'network-error', error }
    } finally {
      clearTimeout(timer)
      signal.removeEventListener('abort', onClose)
      this.#open.delete(request)
    }
  }

  async close(force: boolean): Promise<void> {
    // fetch pools its connections itself: only requests still open are ours to end.
    if (force) for (const request of this.#open) request.abort(new Error('the client is closing'))
  }
}

/** `body` compressed with gzip through the runtime's `CompressionStream`. */
async function gzipped(body: Uint8Array): Promise<Uint8Array> {
  const stream = new Blob([body as Uint8Array<ArrayBuffer>]).stream().pipeThrough(new CompressionStream('gzip'))
  return new Uint8Array(await new Response(stream).arrayBuffer())
}

/** Reads a 2xx answer's body to its end and drops it, so the connection can be used again. */
async function drain(response: Response): Promise<undefined> {
  await response.arrayBuffer()
  return undefined
}

/** The first {@link ANSWER_EXCERPT_BYTES} bytes of a refusal's body, as text; the rest is not read. */
async function excerpt(response: Response): Promise<string | undefined> {
  if (response.body === null) return undefined
  const reader = response.body.getReader()
  const chunks: Uint8Array[] = []
  let bytes = 0
  while (bytes < ANSWER_EXCERPT_BYTES) {
    const { done, value } = await reader.read()
    if (done) break
    chunks.push(value)
    bytes += value.length
  }
  // The rest is not needed. Not awaited: a cancel can wait on the peer, and its outcome changes
  // nothing here (the connection is the runtime's to drop).
  if (bytes >= ANSWER_EXCERPT_BYTES) reader.cancel().catch(() => undefined)
  const all = new Uint8Array(Math.min(bytes, ANSWER_EXCERPT_BYTES))
  let offset = 0
  for (const chunk of chunks) {
    const part = chunk.subarray(0, all.length - offset)
    all.set(part, offset)
    offset += part.length
  }
  return all.length === 0 ? undefined : new TextDecoder().decode(all)
}
