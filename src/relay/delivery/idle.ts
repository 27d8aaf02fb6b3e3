/**
 * Promises that resolve once `isIdle()` holds: `wait()` resolves at once when already idle, and
 * the owner calls `check()` whenever it may have become idle.
 */
export class IdleSignal {
  readonly #isIdle: () => boolean
  /** Resolvers of `wait()`. */
  #waiters: (() => void)[] = []

  constructor(isIdle: () => boolean) {
    this.#isIdle = isIdle
  }

  wait(): Promise<void> {
    if (this.#isIdle()) return Promise.resolve()
    return new Promise((resolve) => this.#waiters.push(resolve))
  }

  check(): void {
    if (this.#waiters.length === 0 || !this.#isIdle()) return
    const waiters = this.#waiters
    this.#waiters = []
    for (const resolve of waiters) resolve()
  }

  /** Resolves once idle, or after `ms` however it stands: a shutdown waits for its grace, no longer. */
  async waitAtMost(ms: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined
    await Promise.race([this.wait(), new Promise((resolve) => (timer = setTimeout(resolve, ms)))])
    clearTimeout(timer)
  }
}
