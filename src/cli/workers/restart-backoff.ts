/** The first wait before a dead worker is started again, in milliseconds. */
export const FIRST_RESTART_DELAY_MS = 100
/** The longest wait: a worker that keeps dying is retried this often, never faster. */
export const MAX_RESTART_DELAY_MS = 30_000
/** A worker that listened this long before dying counts as healthy: its next restart is quick. */
export const HEALTHY_AFTER_MS = 10_000

/**
 * The wait before a worker that died is started again: doubling from
 * {@link FIRST_RESTART_DELAY_MS} up to {@link MAX_RESTART_DELAY_MS} while it keeps dying soon
 * after it started, back to the first once it stayed up {@link HEALTHY_AFTER_MS}. A crash loop
 * therefore costs one start every 30 s, not a spinning core.
 */
export class RestartBackoff {
  /** The next wait, in milliseconds. */
  #delay = FIRST_RESTART_DELAY_MS
  /** When the current process of the slot listened (epoch ms), if it did. */
  #startedAt: number | undefined
  readonly #now: () => number

  constructor(now: () => number = Date.now) {
    this.#now = now
  }

  /** The slot's process listens. */
  started(): void {
    this.#startedAt = this.#now()
  }

  /** The slot's process died: how long to wait before the next one. */
  next(): number {
    const startedAt = this.#startedAt
    this.#startedAt = undefined
    if (startedAt !== undefined && this.#now() - startedAt >= HEALTHY_AFTER_MS) this.#delay = FIRST_RESTART_DELAY_MS
    const delay = this.#delay
    this.#delay = Math.min(this.#delay * 2, MAX_RESTART_DELAY_MS)
    return delay
  }
}
