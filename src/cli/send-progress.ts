import { subscribe, unsubscribe } from 'node:diagnostics_channel'
import { DIAGNOSTICS_CHANNELS, type RequestEvent, type ResponseEvent } from '../sdk/diagnostics'

/**
 * Watches `tracklet send`'s requests through the SDK's own diagnostics channels: each retry is
 * said on stderr as it starts (with why the last attempt failed), so a send against a closed port
 * or a failing API is never silent while it retries; and the last network error is kept, which a
 * `--timeout` would otherwise hide behind `ERR_CLOSED`.
 */
export class SendProgress {
  /** Why the last attempt got no answer (`ECONNREFUSED`, a timeout), if it got none. */
  lastNetworkError: Error | undefined
  /** The last attempt's answer status, if it got one. */
  lastStatus: number | undefined
  readonly #say: (line: string) => void
  readonly #onRequest = (event: unknown): void => this.#started(event as RequestEvent)
  readonly #onResponse = (event: unknown): void => this.#ended(event as ResponseEvent)

  /** @param say writes one line (to stderr), the write key already redacted by the caller. */
  constructor(say: (line: string) => void) {
    this.#say = say
    subscribe(DIAGNOSTICS_CHANNELS.request, this.#onRequest)
    subscribe(DIAGNOSTICS_CHANNELS.response, this.#onResponse)
  }

  stop(): void {
    unsubscribe(DIAGNOSTICS_CHANNELS.request, this.#onRequest)
    unsubscribe(DIAGNOSTICS_CHANNELS.response, this.#onResponse)
  }

  /** How the last attempt ended, as the retry line says it. */
  #lastOutcome = 'no answer'

  #started(event: RequestEvent): void {
    if (event.attempt === 1) return
    this.#say(
      `tracklet send: attempt ${event.attempt - 1} failed (${this.#lastOutcome}); retrying (attempt ${event.attempt})`,
    )
  }

  #ended(event: ResponseEvent): void {
    this.lastStatus = event.status
    const error = event.error === undefined ? undefined : withCode(event.error)
    this.#lastOutcome = error?.message ?? `HTTP ${event.status}`
    // A network failure carries a code (ECONNREFUSED, UND_ERR_…); the SDK's own aborts (its
    // per-request timeout, the client closing) do not, and must not hide the real cause.
    this.lastNetworkError = typeof (error as { code?: unknown } | undefined)?.code === 'string' ? error : undefined
  }
}

/** The error with its `code` (`ECONNREFUSED`) in its message, where it has one and does not say it. */
function withCode(error: Error): Error {
  const code = (error as Error & { code?: unknown }).code
  if (typeof code !== 'string' || error.message.includes(code)) return error
  return Object.assign(new Error(`${code} ${error.message}`), { code })
}
