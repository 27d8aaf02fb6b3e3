import { HttpError } from '../http/http-error'
import { log } from '../log'
import { redactUrlsInText } from '../redact'
import { isStoreFailure } from '../store/data-error'
import type { Store } from '../store/store'

/** The code of every admin answer given while the store does not answer. */
export const STORE_UNAVAILABLE = 'ERR_STORE_UNAVAILABLE'

// The longest error text kept for the log and the page: a driver's message, not a dump.
const MAX_CAUSE_CHARS = 300

/**
 * A store call failed because of the store (unreachable, timed out, broken), not because of the
 * request: answered 503 {@link STORE_UNAVAILABLE}. `cause` is the driver's message, URLs redacted,
 * for the log and the signed-in operator; the client's message does not carry it.
 */
export class StoreUnavailableError extends HttpError {
  /** The store's error, one line, URLs redacted. */
  readonly reason: string

  constructor(reason: string) {
    super(
      503,
      STORE_UNAVAILABLE,
      'the store is unavailable: the relay cannot read or write its outbox now; try again shortly',
    )
    this.name = 'StoreUnavailableError'
    this.reason = reason
  }
}

/**
 * Notes every store call of the admin API and the operator page: when the store last answered,
 * and a failure of the store itself turned into a {@link StoreUnavailableError} (data refused by
 * the store, and HTTP refusals, pass through as they are).
 */
export class StoreCalls {
  readonly #now: () => number
  /** When a call last succeeded, epoch ms; `undefined` before the first. */
  #lastAnswered: number | undefined

  constructor(now: () => number = Date.now) {
    this.#now = now
  }

  /** When the store last answered a call made through {@link watch}, epoch ms. */
  get lastAnswered(): number | undefined {
    return this.#lastAnswered
  }

  /** `store`, with every call's failure of the store itself thrown as a {@link StoreUnavailableError}. */
  watch(store: Store): Store {
    return this.#watch(store)
  }

  // The store's methods and its circuits' (pause, resume), sessions', replays', source configs' and violations', each call watched.
  #watch<T extends object>(object: T): T {
    return new Proxy(object, {
      get: (target, key, receiver) => {
        const value = Reflect.get(target, key, receiver)
        if (
          (key === 'circuits' ||
            key === 'sessions' ||
            key === 'replays' ||
            key === 'sourceConfigs' ||
            key === 'violations' ||
            key === 'suppressions') &&
          typeof value === 'object' &&
          value !== null
        )
          return this.#watch(value)
        if (typeof value !== 'function' || key === 'close') return value
        return (...args: unknown[]) => this.#call(() => (value as (...a: unknown[]) => unknown).apply(target, args))
      },
    })
  }

  async #call<T>(call: () => T): Promise<Awaited<T>> {
    let result: Awaited<T>
    try {
      result = await call()
    } catch (error) {
      // Only the store's own failures are an outage (not a refused argument or piece of data).
      if (error instanceof HttpError || !isStoreFailure(error)) throw error
      throw new StoreUnavailableError(describeCause(error))
    }
    this.#lastAnswered = this.#now()
    return result
  }
}

/** Logs the one line of a request answered 503 because the store is unavailable: no stack. */
export function logStoreUnavailable(method: string | undefined, path: string, error: StoreUnavailableError): void {
  log.warn(`${method} ${path} → 503 ${STORE_UNAVAILABLE}: ${error.reason}`, {
    event: 'store-unavailable',
    status: 503,
    code: STORE_UNAVAILABLE,
  })
}

function describeCause(error: unknown): string {
  // Node's connection errors to a host of several addresses are AggregateErrors with no message.
  const code = (error as { code?: unknown } | null)?.code
  const text =
    error instanceof Error ? error.message || (typeof code === 'string' ? code : '') || error.name : String(error)
  const line = redactUrlsInText(text.replace(/\s+/g, ' ').trim())
  return line.length > MAX_CAUSE_CHARS ? `${line.slice(0, MAX_CAUSE_CHARS - 1)}…` : line
}
