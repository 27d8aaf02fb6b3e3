import { ref, type Timer, unref } from './timers'

/**
 * Holds every batch of a client while a `Retry-After` from the API runs: the API asked the
 * client, not one request, to wait. When the pause passes, the batches held go on in the order
 * they were made (by the sequence number each waits with), so a pause reorders nothing.
 */
export class PauseGate {
  /** When the pause ends, in `Date.now()` milliseconds; the past when not paused. */
  #until = 0
  /** Ends the pause; `undefined` while not paused. */
  #timer: Timer | undefined
  /** The batches held, each with its sequence number and how to let it go. */
  #waiting: { sequence: number; go: () => void }[] = []
  /** Whether the pause's timer keeps the process alive (the client is draining or closing). */
  #holdsProcess = false
  readonly #signal: AbortSignal

  /** @param signal Aborted when the client gives up: the pause ends and everyone held goes at once. */
  constructor(signal: AbortSignal) {
    this.#signal = signal
    signal.addEventListener('abort', () => this.#end(), { once: true })
  }

  /** Whether batches are held now. */
  get paused(): boolean {
    return this.#timer !== undefined
  }

  /** Holds every batch for `ms` from now, unless an earlier pause already runs longer. */
  pause(ms: number): void {
    if (this.#signal.aborted) return
    const until = Date.now() + ms
    if (until <= this.#until && this.#timer !== undefined) return
    this.#until = until
    clearTimeout(this.#timer)
    this.#timer = setTimeout(() => this.#end(), ms)
    if (!this.#holdsProcess) unref(this.#timer)
  }

  /** Resolves when the pause ends (or the client gives up), after the batches made before this one. */
  wait(sequence: number): Promise<void> {
    if (this.#timer === undefined) return Promise.resolve()
    return new Promise((go) => {
      this.#waiting.push({ sequence, go })
    })
  }

  /** From now on the pause keeps the process alive: the process is about to exit, or the client is closing. */
  holdProcess(): void {
    this.#holdsProcess = true
    ref(this.#timer)
  }

  #end(): void {
    clearTimeout(this.#timer)
    this.#timer = undefined
    const waiting = this.#waiting.sort((a, b) => a.sequence - b.sequence)
    this.#waiting = []
    // Resolved in order, so each batch's request is started in that order.
    for (const { go } of waiting) go()
  }
}
