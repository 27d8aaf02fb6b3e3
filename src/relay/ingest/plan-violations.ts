import type { NewViolation, ViolationStore } from '../store/violations'

interface Waiting {
  violations: readonly NewViolation[]
  resolve: () => void
  reject: (error: Error) => void
}

/**
 * Writes the violations of every request that found some in the same turn of the event loop in one
 * store call (as `GroupCommit` does for deliveries): a burst of requests that break a plan costs
 * one transaction per turn, not one each. Each request's promise settles with that write.
 */
export class ViolationWriter {
  readonly #store: ViolationStore
  #waiting: Waiting[] = []
  #scheduled: NodeJS.Immediate | undefined
  readonly #writing = new Set<Promise<void>>()

  constructor(store: ViolationStore) {
    this.#store = store
  }

  /** Resolves once `violations` are written; rejects if the write holding them failed. */
  record(violations: readonly NewViolation[]): Promise<void> {
    if (violations.length === 0) return Promise.resolve()
    return new Promise((resolve, reject) => {
      this.#waiting.push({ violations, resolve, reject })
      this.#scheduled ??= setImmediate(() => void this.flush())
    })
  }

  /** Writes what waits now; resolves once every write under way has settled. Never rejects. */
  async flush(): Promise<void> {
    clearImmediate(this.#scheduled)
    this.#scheduled = undefined
    const group = this.#waiting
    if (group.length > 0) {
      this.#waiting = []
      const writing = this.#store.record(group.flatMap((w) => w.violations)).then(
        () => {
          for (const w of group) w.resolve()
        },
        (error: unknown) => {
          for (const w of group) w.reject(error as Error)
        },
      )
      this.#writing.add(writing)
      void writing.finally(() => this.#writing.delete(writing))
    }
    await Promise.all(this.#writing)
  }
}
