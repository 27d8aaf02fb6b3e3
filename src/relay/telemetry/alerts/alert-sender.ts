import { type Dispatcher, request } from 'undici'
import { redactUrl } from '../../../shared/redact-url'
import { log } from '../../log'
import { ALERT_EVENTS, type AlertEvent, type AlertsOptions } from '../../config/alerts-option'
import type { AlertClaimStore } from '../../store/alert-claims'
import type { AlertNotice } from './alert-notice'
import { DeadLetterNotices } from './dead-letter-notices'

// An alert is tried this many times, waiting 1 s, 2 s, 4 s, … (at most a minute) between tries.
const MAX_TRIES = 6
const FIRST_RETRY_MS = 1000
const MAX_RETRY_MS = 60_000
// Alerts waiting to be sent: past this the oldest is dropped (an alert receiver down for hours
// must not grow the relay's memory).
const MAX_QUEUED = 1000
// One alert request's time limit, ms.
const REQUEST_TIMEOUT_MS = 10_000

/** What an {@link AlertSender} needs besides its options. */
export interface AlertSenderDeps {
  /** The store's claims: which relay sends each endpoint's next `delivery.failed`. */
  claims: AlertClaimStore
  dispatcher?: Dispatcher | undefined
  now?: (() => number) | undefined
}

/**
 * Sends the relay's alerts to the operator's URL: queued, sent one at a time, retried with
 * back-off, never awaited by the caller (delivery never waits for an alert). `delivery.failed`
 * goes at most once a minute per endpoint across the relays on the store, with the count of dead
 * letters since the last one ({@link DeadLetterNotices}).
 */
export class AlertSender {
  readonly #url: string
  readonly #events: ReadonlySet<AlertEvent>
  readonly #dispatcher: Dispatcher | undefined
  readonly #now: () => number
  readonly #queue: AlertNotice[] = []
  readonly #deadLetters: DeadLetterNotices
  #sending = false
  #retry: NodeJS.Timeout | undefined
  #stopped = false

  constructor(options: AlertsOptions, deps: AlertSenderDeps) {
    this.#url = options.url
    this.#events = new Set(options.events ?? ALERT_EVENTS)
    this.#dispatcher = deps.dispatcher
    this.#now = deps.now ?? Date.now
    this.#deadLetters = new DeadLetterNotices(deps.claims, this.#now, (notice) => this.#send(notice))
  }

  /** A webhook URL's circuit opened (this relay opened it). */
  endpointFailing(url: string, error: string | undefined): void {
    this.#send({ event: 'endpoint.failing', at: this.#at(), url: redactUrl(url), ...(error ? { error } : {}) })
  }

  /** A webhook URL's circuit closed (this relay closed it). */
  endpointRecovered(url: string): void {
    this.#send({ event: 'endpoint.recovered', at: this.#at(), url: redactUrl(url) })
  }

  /** A delivery to `url` was dead-lettered (by this relay). */
  deadLettered(url: string, source: string, error: string | undefined): void {
    if (!this.#events.has('delivery.failed') || this.#stopped) return
    this.#deadLetters.deadLettered(url, source, error)
  }

  /** Resolves once the store has answered every dead letter's claim so far (for tests). */
  idle(): Promise<void> {
    return this.#deadLetters.idle()
  }

  /** Stops: nothing more is sent (what is queued is dropped). */
  stop(): void {
    this.#stopped = true
    clearTimeout(this.#retry)
    this.#deadLetters.stop()
    this.#queue.length = 0
  }

  #at(): string {
    return new Date(this.#now()).toISOString()
  }

  #send(notice: AlertNotice): void {
    if (this.#stopped || !this.#events.has(notice.event)) return
    if (this.#queue.length >= MAX_QUEUED) {
      const dropped = this.#queue.shift()!
      log.warn(`alerts: dropped a ${dropped.event} alert: ${MAX_QUEUED} are waiting to be sent`, {
        event: 'alert-dropped',
      })
    }
    this.#queue.push(notice)
    void this.#pump(0)
  }

  async #pump(tries: number): Promise<void> {
    if (this.#sending || this.#stopped) return
    const notice = this.#queue[0]
    if (notice === undefined) return
    this.#sending = true
    let failure: string | undefined
    try {
      const response = await request(this.#url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(notice),
        headersTimeout: REQUEST_TIMEOUT_MS,
        bodyTimeout: REQUEST_TIMEOUT_MS,
        ...(this.#dispatcher === undefined ? {} : { dispatcher: this.#dispatcher }),
      })
      await response.body.dump()
      if (response.statusCode < 200 || response.statusCode > 299) failure = `HTTP ${response.statusCode}`
    } catch (error) {
      failure = (error as Error).message
    } finally {
      this.#sending = false
    }
    if (this.#stopped) return
    if (failure === undefined || tries + 1 >= MAX_TRIES) {
      if (failure !== undefined) {
        log.warn(`alerts: gave up on a ${notice.event} alert after ${MAX_TRIES} tries: ${failure}`, {
          event: 'alert-failed',
        })
      }
      this.#queue.shift()
      void this.#pump(0)
      return
    }
    const wait = Math.min(MAX_RETRY_MS, FIRST_RETRY_MS * 2 ** tries)
    log.debug(`alerts: a ${notice.event} alert failed (${failure}); trying again in ${wait} ms`, {
      event: 'alert-retry',
    })
    this.#retry = setTimeout(() => void this.#pump(tries + 1), wait)
    this.#retry.unref()
  }
}
