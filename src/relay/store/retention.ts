import { log, plural } from '../log'
import type { Store } from './store'

// Rows deleted per statement: each prune is a short transaction, never one that holds the
// database for long under a large backlog.
const PRUNE_CHUNK = 1000

/**
 * Deletes delivered and filtered deliveries (and their attempts), replays that ended, violations
 * and the alerts' claims of endpoints that owe no notice, once they are older than `retention` ms, so the database never grows without bound. Dead-lettered
 * and pending deliveries are kept. Runs
 * every `retention / 2` (at least every 100 ms, at most every minute); with several relays on one
 * database each sweeps, and a row deleted by one is simply not there for the others.
 */
export class RetentionSweeper {
  readonly #store: Store
  readonly #retention: number
  readonly #now: () => number
  #timer: NodeJS.Timeout | undefined
  #sweeping: Promise<void> | undefined
  #stopped = false

  constructor(store: Store, retention: number, now: () => number = Date.now) {
    this.#store = store
    this.#retention = retention
    this.#now = now
  }

  /** Starts sweeping on a timer that never keeps the process alive by itself. */
  start(): void {
    if (this.#stopped || this.#timer !== undefined) return
    const every = Math.max(100, Math.min(60_000, Math.floor(this.#retention / 2)))
    this.#timer = setInterval(() => void this.sweep(), every)
    this.#timer.unref()
  }

  /** Deletes what has outlived the retention now; resolves with how many deliveries went. */
  async sweep(): Promise<number> {
    if (this.#sweeping !== undefined) {
      await this.#sweeping
      return 0
    }
    let pruned = 0
    const run = (async () => {
      try {
        const before = this.#now() - this.#retention
        for (;;) {
          const deleted = await this.#store.prune(before, PRUNE_CHUNK)
          pruned += deleted
          if (deleted < PRUNE_CHUNK || this.#stopped) break
        }
        // Replays are kept as long (docs/replay.md).
        await this.#store.replays.prune(before)
        // Tracking plans' violations are kept for the same time (docs/plans.md).
        while (!this.#stopped && (await this.#store.violations.prune(before, PRUNE_CHUNK)) === PRUNE_CHUNK);
        // And the alerts' claims of endpoints that owe no notice (a row per endpoint, few).
        await this.#store.alertClaims.prune(before)
        if (pruned > 0) {
          log.info(
            `retention: deleted ${plural(pruned, 'settled delivery', 'settled deliveries')} older than ${this.#retention} ms`,
            { event: 'retention', pruned },
          )
        }
      } catch (error) {
        log.error(`retention sweep failed: ${(error as Error).message}`, { event: 'retention-failed' })
      }
    })()
    this.#sweeping = run
    await run
    this.#sweeping = undefined
    return pruned
  }

  /** Stops the timer and waits for a sweep under way. */
  async stop(): Promise<void> {
    this.#stopped = true
    clearInterval(this.#timer)
    await this.#sweeping
  }
}
