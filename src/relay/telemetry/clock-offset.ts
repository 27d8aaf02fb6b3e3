import { log } from '../log'
import type { Store } from '../store/store'

/** How often a relay measures its clock's offset to the database's, ms (and once at start). */
export const CLOCK_OFFSET_INTERVAL_MS = 60_000

/**
 * An offset beyond which a relay warns, ms. Leases and due times are judged by the database's
 * clock, so no offset costs a duplicate; but this relay's logs, the times its admin API is asked
 * about and its circuits' probe times are on its own clock, and an offset this large means NTP is
 * not keeping it.
 */
export const CLOCK_OFFSET_WARN_MS = 1000

/** What {@link ClockOffset} needs. */
export interface ClockOffsetOptions {
  store: Pick<Store, 'databaseNow'>
  /** This relay's clock, epoch ms. */
  now?: () => number
}

/**
 * This relay's clock's offset to the database's (the one leases and due times are judged by):
 * measured at {@link start} and every minute, read by the `tracklet_clock_offset_seconds` metric,
 * and warned about past {@link CLOCK_OFFSET_WARN_MS}.
 */
export class ClockOffset {
  readonly #store: Pick<Store, 'databaseNow'>
  readonly #now: () => number
  /** The last offset measured, ms (the database's clock minus this relay's); `undefined` until one is. */
  #offsetMs: number | undefined
  /** The timer of the next measurement, until {@link stop}. */
  #timer: NodeJS.Timeout | undefined

  constructor(options: ClockOffsetOptions) {
    this.#store = options.store
    this.#now = options.now ?? Date.now
  }

  /** The last offset measured, seconds: positive when the database's clock is ahead of this relay's. */
  get seconds(): number | undefined {
    return this.#offsetMs === undefined ? undefined : this.#offsetMs / 1000
  }

  /** Measures now and every {@link CLOCK_OFFSET_INTERVAL_MS}; the timer never holds the process up. */
  start(): void {
    if (this.#timer !== undefined) return
    this.#timer = setInterval(() => void this.measure(), CLOCK_OFFSET_INTERVAL_MS)
    this.#timer.unref()
    void this.measure()
  }

  /** No more measurements. */
  stop(): void {
    clearInterval(this.#timer)
  }

  /**
   * Reads the database's clock once and keeps the offset, taking the middle of the round trip as
   * the instant it was read (so half the round trip is the error at most). A failed reading keeps
   * the last offset: the store's unavailability is /healthz's to report.
   */
  async measure(): Promise<void> {
    const before = this.#now()
    let databaseNow: number
    try {
      databaseNow = await this.#store.databaseNow()
    } catch (error) {
      log.debug(`could not read the database's clock: ${(error as Error).message}`, { event: 'clock-offset-failed' })
      return
    }
    const after = this.#now()
    const offsetMs = databaseNow - (before + after) / 2
    this.#offsetMs = offsetMs
    if (Math.abs(offsetMs) > CLOCK_OFFSET_WARN_MS) {
      const seconds = (offsetMs / 1000).toFixed(1)
      log.warn(
        `this relay's clock is ${seconds.replace('-', '')} s ${offsetMs > 0 ? 'behind' : 'ahead of'} the database's: leases and due times follow the database's clock, but check NTP on this host`,
        { event: 'clock-offset', offsetSeconds: offsetMs / 1000 },
      )
    }
  }
}
