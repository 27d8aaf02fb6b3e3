import { diagnostics } from './platform/runtime'
import type { AttemptOutcome } from './retry-policy'
import type { Transport } from './transport/transport'

/**
 * Makes each request through the transport, counts requests and bytes for `stats()`, and tells
 * `tracklet:request` / `tracklet:response` subscribers (Node's diagnostics channels) about it.
 */
export class Attempts {
  /** HTTP requests made, retries included. */
  requests = 0
  /** Requests that were retries (counted by the publisher, which decides them). */
  retries = 0
  /** Request body bytes as sent (compressed when `gzip` is on). */
  bytesSent = 0
  readonly #transport: Transport

  constructor(transport: Transport) {
    this.#transport = transport
  }

  /** One request for a batch of `messages`: attempt number `attempt` (1 for the first). */
  async send(messages: number, body: Uint8Array, attempt: number, signal: AbortSignal): Promise<AttemptOutcome> {
    this.requests++
    // Read once: with no subscriber (the usual case) no event object is ever made.
    const observed = diagnostics.active
    const url = this.#transport.url
    const startedAt = observed ? Date.now() : 0
    if (observed) diagnostics.request({ url, messages, bytes: body.length, attempt })
    const outcome = await this.#transport.send(body, signal)
    this.bytesSent += outcome.sent ?? 0
    if (observed) {
      const ms = Date.now() - startedAt
      diagnostics.response(
        outcome.kind === 'response'
          ? { url, messages, status: outcome.status, ms }
          : { url, messages, error: outcomeError(outcome), ms },
      )
    }
    return outcome
  }
}

/** Why a request got no answer, as an `Error` for the `tracklet:response` channel. */
function outcomeError(outcome: Exclude<AttemptOutcome, { kind: 'response' }>): Error {
  if (outcome.kind === 'timeout') return new Error('request timed out')
  return outcome.error instanceof Error ? outcome.error : new Error(String(outcome.error))
}
