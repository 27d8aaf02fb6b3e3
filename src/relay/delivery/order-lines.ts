import { log } from '../log'
import type { Store } from '../store/store'

/**
 * How often each relay puts the held deliveries of ordered destinations at their line heads' due
 * times (docs/delivery-controls.md, "Ordering"), ms: a line whose head starts waiting for a retry
 * is read by claims for at most this long, instead of at every claim until the head goes.
 */
export const ORDER_LINES_EVERY_MS = 2000

/**
 * Keeps claims from reading the deliveries held behind a retried one (`OrderingStore.mirrorHeads`),
 * on a timer that never keeps the process alive. Cheap when nothing is ordered: the statement reads
 * the ordering index, which holds only ordered pending deliveries. Idempotent, so every relay on a
 * shared store may run it.
 */
export class OrderLines {
  readonly #store: Pick<Store, 'ordering'>
  #timer: NodeJS.Timeout | undefined
  #running: Promise<void> | undefined
  #failing = false

  constructor(store: Pick<Store, 'ordering'>) {
    this.#store = store
  }

  start(): void {
    this.#timer ??= setInterval(() => void this.mirror(), ORDER_LINES_EVERY_MS).unref()
  }

  /** Moves the held deliveries once (one at a time: a run under way is waited for). */
  async mirror(): Promise<void> {
    if (this.#running !== undefined) return this.#running
    this.#running = (async () => {
      try {
        await this.#store.ordering.mirrorHeads()
        this.#failing = false
      } catch (error) {
        // Claims stay right without it (only slower): said once per failing spell, not per tick.
        if (!this.#failing) {
          log.warn(`could not move held ordered deliveries: ${(error as Error).message}`, {
            event: 'order-lines-failed',
          })
        }
        this.#failing = true
      } finally {
        this.#running = undefined
      }
    })()
    return this.#running
  }

  async stop(): Promise<void> {
    clearInterval(this.#timer)
    this.#timer = undefined
    await this.#running
  }
}
