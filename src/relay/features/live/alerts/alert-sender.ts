import { type Dispatcher, request } from 'undici'
import { redactUrl } from '../../../../shared/redact-url'
import { log } from '../../../log'
import { ALERT_EVENTS, type AlertEvent, type AlertsOptions } from '../../../config/alerts-option'
import type { AlertClaimStore } from '../../../store/alert-claims'
import type { AlertNotice } from './alert-notice'
import type { RelayEvent, SettledAttempt } from '../../../events/kinds'
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
  /** URLs whose circuit a 4xx closed: `endpoint.recovered` waits for their first 2xx. */
  readonly #awaiting2xx = new Set<string>()
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

  /** A circuit change this relay made (a `circuit` event). */
  circuitChanged(event: Extract<RelayEvent, { type: 'circuit' }>): void {
    if (event.change === 'opened') this.endpointFailing(event.url, event.error, event.status)
    else this.endpointRecovered(event.url, event.status)
  }

  /** An attempt settled: its dead letters are alerted, and a 2xx may end a wait for recovery. */
  attemptSettled(attempt: SettledAttempt): void {
    const { outcome, source } = attempt
    for (const request of outcome.requests) {
      if (isSuccess(request.status) && this.#awaiting2xx.delete(request.url)) {
        this.#recovered(request.url, request.status)
      }
    }
    if (outcome.next.status !== 'failed') return
    const lastStatus = new Map(outcome.requests.map((request) => [request.url, request.status]))
    const { error } = outcome.next
    for (const [url, status] of lastStatus) this.deadLettered(url, source, error, status)
  }

  /** A webhook URL's circuit opened (this relay opened it), on a failure answered `status`. */
  endpointFailing(url: string, error: string | undefined, status?: number): void {
    this.#awaiting2xx.delete(url)
    this.#send({
      event: 'endpoint.failing',
      at: this.#at(),
      url: redactUrl(url),
      ...(error ? { error } : {}),
      ...(status === undefined ? {} : { status }),
    })
  }

  /**
   * A webhook URL's circuit closed (this relay closed it) on an answer with `status`. Only a 2xx is
   * a recovery: a 4xx closes the circuit (the receiver is there) while every delivery it answers is
   * dead-lettered, so `endpoint.recovered` waits for the URL's first 2xx.
   */
  endpointRecovered(url: string, status: number | undefined): void {
    if (isSuccess(status)) this.#recovered(url, status)
    else if (!this.#stopped) this.#awaiting2xx.add(url)
  }

  /** A delivery to `url` was dead-lettered (by this relay), its last request answered `status`. */
  deadLettered(url: string, source: string, error: string | undefined, status?: number): void {
    if (!this.#events.has('delivery.failed') || this.#stopped) return
    this.#deadLetters.deadLettered(url, source, error, status)
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
    this.#awaiting2xx.clear()
  }

  #recovered(url: string, status: number | undefined): void {
    this.#send({
      event: 'endpoint.recovered',
      at: this.#at(),
      url: redactUrl(url),
      ...(status === undefined ? {} : { status }),
    })
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

function isSuccess(status: number | undefined): status is number {
  return status !== undefined && status >= 200 && status <= 299
}
