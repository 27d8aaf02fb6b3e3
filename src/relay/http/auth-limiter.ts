import type { IncomingMessage } from 'node:http'
import { log, plural } from '../log'
import { HttpError } from './http-error'

/** Failed authentications a client address may make in one window before it is refused (429). */
export const MAX_AUTH_FAILURES = 10
/** The window failed authentications are counted in, ms; a refused address waits until it ends. */
export const AUTH_FAILURE_WINDOW_MS = 60_000
/** Addresses remembered at once; past this the oldest is forgotten, so memory stays bounded. */
const MAX_ADDRESSES = 10_000

/** What {@link AuthLimiter} needs. */
export interface AuthLimiterOptions {
  /** Read the client address from `X-Forwarded-For` (its last entry: the one the proxy saw). */
  trustProxy: boolean
  now?: () => number
}

/** Where a credential was refused, as the log line names it (`operator page: sign-in`). */
export type AuthSurface = 'ingest: write key' | 'admin API: token' | 'metrics: token' | 'operator page: sign-in'

interface Failures {
  /** When the current window began, epoch ms. */
  since: number
  /** Failed authentications in it. */
  count: number
  /** Refusals (401 and 429) not yet logged, by surface. */
  unlogged: Map<AuthSurface, number>
}

/**
 * Limits failed authentication per client address, on every surface that takes a credential
 * (write keys, the admin token, the metrics token, the operator page's sign-in): after
 * {@link MAX_AUTH_FAILURES} failures within {@link AUTH_FAILURE_WINDOW_MS}, the address is
 * answered 429 with `Retry-After` until the window ends, before any credential is looked at,
 * so guessing stops paying. Other addresses are untouched. Refusals are logged as one line per
 * address and surface per window (`log.warn`), never one per request: a guessing loop cannot
 * fill the disk.
 */
export class AuthLimiter {
  readonly #trustProxy: boolean
  readonly #now: () => number
  /** Each address with failures in its current window, oldest first. */
  readonly #failures = new Map<string, Failures>()
  /** The timer that logs the refusals of the window, while there are any to log. */
  #logTimer: NodeJS.Timeout | undefined

  constructor(options: AuthLimiterOptions) {
    this.#trustProxy = options.trustProxy
    this.#now = options.now ?? Date.now
  }

  /**
   * Runs `authenticate` (which throws a 401 {@link HttpError} to refuse) for the client of `req`,
   * counting a refusal against its address. Throws a 429 {@link HttpError} without running it
   * while the address is over its failures.
   */
  guard<T>(req: IncomingMessage, surface: AuthSurface, authenticate: () => T): T {
    this.refuseIfLimited(req, surface)
    try {
      return authenticate()
    } catch (error) {
      if (error instanceof HttpError && error.status === 401) this.failed(req, surface)
      throw error
    }
  }

  /** Throws a 429 {@link HttpError} with `Retry-After` while the client of `req` is over its failures. */
  refuseIfLimited(req: IncomingMessage, surface: AuthSurface): void {
    const address = this.#addressOf(req)
    const entry = this.#current(address)
    if (entry === undefined || entry.count < MAX_AUTH_FAILURES) return
    this.#unlogged(entry, surface)
    const seconds = Math.max(1, Math.ceil((entry.since + AUTH_FAILURE_WINDOW_MS - this.#now()) / 1000))
    throw new HttpError(
      429,
      'ERR_TOO_MANY_FAILURES',
      `too many failed authentications from this address: try again in ${plural(seconds, 'second')}`,
      { 'retry-after': String(seconds) },
    )
  }

  /** The client of `req` failed to authenticate. */
  failed(req: IncomingMessage, surface: AuthSurface): void {
    const address = this.#addressOf(req)
    let entry = this.#current(address)
    if (entry === undefined) {
      while (this.#failures.size >= MAX_ADDRESSES) this.#forget(this.#failures.keys().next().value!)
      entry = { since: this.#now(), count: 0, unlogged: new Map() }
      this.#failures.set(address, entry)
    }
    entry.count++
    this.#unlogged(entry, surface)
  }

  /** Logs what is left to log and stops the timer (the relay is closing). */
  stop(): void {
    clearTimeout(this.#logTimer)
    this.#logTimer = undefined
    this.#logRefusals()
  }

  // The address's failures in its current window; a window that has ended is forgotten.
  #current(address: string): Failures | undefined {
    const entry = this.#failures.get(address)
    if (entry === undefined || this.#now() - entry.since < AUTH_FAILURE_WINDOW_MS) return entry
    this.#forget(address)
    return undefined
  }

  #forget(address: string): void {
    const entry = this.#failures.get(address)
    if (entry !== undefined && entry.unlogged.size > 0) this.#logOne(address, entry)
    this.#failures.delete(address)
  }

  #unlogged(entry: Failures, surface: AuthSurface): void {
    entry.unlogged.set(surface, (entry.unlogged.get(surface) ?? 0) + 1)
    if (this.#logTimer !== undefined) return
    this.#logTimer = setTimeout(() => {
      this.#logTimer = undefined
      this.#logRefusals()
    }, AUTH_FAILURE_WINDOW_MS)
    // Logging a summary is no reason to keep the process alive.
    this.#logTimer.unref()
  }

  #logRefusals(): void {
    for (const [address, entry] of this.#failures) if (entry.unlogged.size > 0) this.#logOne(address, entry)
  }

  // One line per surface the address was refused on: `operator page: sign-in refused 3 times from 10.0.4.7`.
  #logOne(address: string, entry: Failures): void {
    const limited = entry.count >= MAX_AUTH_FAILURES ? ` (over ${MAX_AUTH_FAILURES} failures: answered 429)` : ''
    for (const [surface, count] of entry.unlogged) {
      log.warn(`${surface} refused ${plural(count, 'time')} from ${address}${limited}`, {
        event: 'auth-refused',
        address,
        count,
      })
    }
    entry.unlogged.clear()
  }

  #addressOf(req: IncomingMessage): string {
    if (this.#trustProxy) {
      const header = req.headers['x-forwarded-for']
      const forwarded = (Array.isArray(header) ? header.join(',') : (header ?? ''))
        .split(',')
        .map((part) => part.trim())
        .filter((part) => part.length > 0)
        .at(-1)
      if (forwarded !== undefined) return forwarded
    }
    return req.socket.remoteAddress ?? 'unknown'
  }
}
