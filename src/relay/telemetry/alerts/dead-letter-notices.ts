import { redactUrl } from '../../../shared/redact-url'
import { log } from '../../log'
import type { AlertClaimStore } from '../../store/alert-claims'
import { type AlertNotice, DELIVERY_FAILED_INTERVAL_MS } from './alert-notice'

/** What each endpoint's next notice says besides its count: this relay's latest dead letter of it. */
interface LastDeadLetter {
  source: string
  error: string | undefined
}

/**
 * `delivery.failed` notices: at most one a minute per endpoint across every relay on the store,
 * each with the count of dead letters since the last. The store decides who sends
 * ({@link AlertClaimStore}): a dead letter that comes within the minute is counted there, and the
 * relay that counted it comes back when the minute ends to claim the notice of all those counted
 * (by any relay); one relay wins it. The caller never waits: the store is asked in the background.
 */
export class DeadLetterNotices {
  readonly #claims: AlertClaimStore
  readonly #now: () => number
  readonly #send: (notice: AlertNotice) => void
  readonly #last = new Map<string, LastDeadLetter>()
  /** Per endpoint, when this relay comes back to claim, and the timer that does. */
  readonly #flushes = new Map<string, { at: number; timer: NodeJS.Timeout }>()
  readonly #inFlight = new Set<Promise<void>>()
  #stopped = false

  constructor(claims: AlertClaimStore, now: () => number, send: (notice: AlertNotice) => void) {
    this.#claims = claims
    this.#now = now
    this.#send = send
  }

  /** A delivery to `url` was dead-lettered by this relay. */
  deadLettered(url: string, source: string, error: string | undefined): void {
    if (this.#stopped) return
    this.#last.set(url, { source, error })
    this.#track(
      this.#claims.deadLettered(url, this.#now(), DELIVERY_FAILED_INTERVAL_MS).then(
        (claim) => {
          if (claim.claimed) this.#notify(url, claim.count)
          else this.#flushAt(url, claim.nextAt)
        },
        (failure: unknown) => {
          // The store is what failed: the operator hears of this dead letter all the same.
          log.warn(
            `alerts: could not count a dead letter in the store, so it is alerted alone: ${(failure as Error).message}`,
            {
              event: 'alert-claim-failed',
            },
          )
          this.#notify(url, 1)
        },
      ),
    )
  }

  /** Resolves once every question to the store asked so far is answered (tests, and stop). */
  async idle(): Promise<void> {
    while (this.#inFlight.size > 0) await Promise.all([...this.#inFlight])
  }

  stop(): void {
    this.#stopped = true
    for (const { timer } of this.#flushes.values()) clearTimeout(timer)
    this.#flushes.clear()
  }

  // Comes back at `at` to claim the notice of what was counted; a later `at` (another relay sent
  // a notice since, so the minute moved on) replaces an earlier one.
  #flushAt(url: string, at: number): void {
    const standing = this.#flushes.get(url)
    if (this.#stopped || (standing !== undefined && standing.at >= at)) return
    clearTimeout(standing?.timer)
    const timer = setTimeout(
      () => {
        this.#flushes.delete(url)
        this.#track(
          this.#claims.flush(url, this.#now(), DELIVERY_FAILED_INTERVAL_MS).then(
            (claim) => {
              if (claim.claimed) this.#notify(url, claim.count)
            },
            (failure: unknown) => {
              log.warn(`alerts: could not claim a delivery.failed notice: ${(failure as Error).message}`, {
                event: 'alert-claim-failed',
              })
            },
          ),
        )
      },
      Math.max(0, at - this.#now()),
    )
    timer.unref()
    this.#flushes.set(url, { at, timer })
  }

  #notify(url: string, count: number): void {
    if (this.#stopped) return
    const last = this.#last.get(url)
    const notice: AlertNotice = {
      event: 'delivery.failed',
      at: new Date(this.#now()).toISOString(),
      url: redactUrl(url),
      count,
    }
    if (last !== undefined) notice.source = last.source
    if (last?.error) notice.error = last.error
    this.#send(notice)
  }

  #track(promise: Promise<void>): void {
    this.#inFlight.add(promise)
    void promise.finally(() => this.#inFlight.delete(promise))
  }
}
