import { redactUrl } from '../../../../shared/redact-url'
import { log } from '../../../log'
import type { AlertClaimStore } from '../../../store/alert-claims'
import {
  type AlertNotice,
  DELIVERY_FAILED_GATHER_MAX_MS,
  DELIVERY_FAILED_GATHER_MS,
  DELIVERY_FAILED_INTERVAL_MS,
} from './alert-notice'

/** What each endpoint's next notice says besides its count: this relay's latest dead letter of it. */
interface LastDeadLetter {
  source: string
  error: string | undefined
  status: number | undefined
}

/** A notice this relay claimed, counting the dead letters that come with it before it goes. */
interface Gathering {
  count: number
  /** When it was claimed (epoch ms): it goes {@link DELIVERY_FAILED_GATHER_MAX_MS} later at most. */
  since: number
  timer?: NodeJS.Timeout
}

/**
 * `delivery.failed` notices: at most one a minute per endpoint across every relay on the store,
 * each with the count of dead letters since the last. The store decides who sends
 * ({@link AlertClaimStore}): a dead letter that comes within the minute is counted there, and the
 * relay that counted it comes back when the minute ends to claim the notice of all those counted
 * (by any relay); one relay wins it. The caller never waits: the store is asked in the background.
 *
 * A notice claimed on a dead letter is held until the endpoint has been quiet for
 * {@link DELIVERY_FAILED_GATHER_MS}, and counts this relay's dead letters of it meanwhile (those
 * that came while the store was asked too): a backlog dead-lettered together is one notice.
 */
export class DeadLetterNotices {
  readonly #claims: AlertClaimStore
  readonly #now: () => number
  readonly #send: (notice: AlertNotice) => void
  readonly #last = new Map<string, LastDeadLetter>()
  /** Per endpoint, when this relay comes back to claim, and the timer that does. */
  readonly #flushes = new Map<string, { at: number; timer: NodeJS.Timeout }>()
  readonly #inFlight = new Set<Promise<void>>()
  /** Per endpoint whose claim is being asked, the dead letters that came meanwhile. */
  readonly #asking = new Map<string, number>()
  readonly #gathering = new Map<string, Gathering>()
  #stopped = false

  constructor(claims: AlertClaimStore, now: () => number, send: (notice: AlertNotice) => void) {
    this.#claims = claims
    this.#now = now
    this.#send = send
  }

  /** A delivery to `url` was dead-lettered by this relay, its last request answered `status`. */
  deadLettered(url: string, source: string, error: string | undefined, status?: number): void {
    if (this.#stopped) return
    this.#last.set(url, { source, error, status })
    const gathering = this.#gathering.get(url)
    const held = this.#asking.get(url)
    if (gathering !== undefined) this.#gather(url, 1)
    else if (held !== undefined) this.#asking.set(url, held + 1)
    else this.#ask(url)
  }

  /** Resolves once every question to the store asked so far is answered (tests, and stop). */
  async idle(): Promise<void> {
    while (this.#inFlight.size > 0) await Promise.all([...this.#inFlight])
  }

  stop(): void {
    this.#stopped = true
    for (const { timer } of this.#flushes.values()) clearTimeout(timer)
    this.#flushes.clear()
    for (const { timer } of this.#gathering.values()) clearTimeout(timer)
    this.#gathering.clear()
  }

  // Asks the store to count a dead letter (and claim the notice when due), holding those that
  // come meanwhile: a claim gathers them; otherwise each is counted in the store in turn.
  #ask(url: string): void {
    this.#asking.set(url, 0)
    this.#track(
      this.#claims.deadLettered(url, this.#now(), DELIVERY_FAILED_INTERVAL_MS).then(
        (claim) => {
          const held = this.#takeHeld(url)
          if (claim.claimed) {
            this.#gather(url, claim.count + held)
            return
          }
          this.#flushAt(url, claim.nextAt)
          for (let i = 0; i < held; i++) this.#count(url)
        },
        (failure: unknown) => {
          const held = this.#takeHeld(url)
          // The store is what failed: the operator hears of these dead letters all the same.
          log.warn(
            `alerts: could not count a dead letter in the store, so it is alerted alone: ${(failure as Error).message}`,
            { event: 'alert-claim-failed' },
          )
          this.#notify(url, 1 + held)
        },
      ),
    )
  }

  #takeHeld(url: string): number {
    const held = this.#asking.get(url) ?? 0
    this.#asking.delete(url)
    return held
  }

  // One dead letter counted in the store with nothing held (it came while a claim was asked).
  #count(url: string): void {
    this.#track(
      this.#claims.deadLettered(url, this.#now(), DELIVERY_FAILED_INTERVAL_MS).then(
        (claim) => {
          if (claim.claimed) this.#gather(url, claim.count)
          else this.#flushAt(url, claim.nextAt)
        },
        (failure: unknown) => {
          log.warn(`alerts: could not count a dead letter in the store: ${(failure as Error).message}`, {
            event: 'alert-claim-failed',
          })
          this.#notify(url, 1)
        },
      ),
    )
  }

  // Adds `count` to the claimed notice of `url` (starting it if none), and sends it once the
  // endpoint has been quiet for the gathering time, or the longest gathering is reached.
  #gather(url: string, count: number): void {
    if (this.#stopped) return
    const now = this.#now()
    const gathering = this.#gathering.get(url) ?? { count: 0, since: now }
    gathering.count += count
    clearTimeout(gathering.timer)
    const quiet = now + DELIVERY_FAILED_GATHER_MS
    const at = Math.min(quiet, gathering.since + DELIVERY_FAILED_GATHER_MAX_MS)
    gathering.timer = setTimeout(
      () => {
        this.#gathering.delete(url)
        this.#notify(url, gathering.count)
      },
      Math.max(0, at - now),
    )
    gathering.timer.unref()
    this.#gathering.set(url, gathering)
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
    if (last?.status !== undefined) notice.status = last.status
    this.#send(notice)
  }

  #track(promise: Promise<void>): void {
    this.#inFlight.add(promise)
    void promise.finally(() => this.#inFlight.delete(promise))
  }
}
