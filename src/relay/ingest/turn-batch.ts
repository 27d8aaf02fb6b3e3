interface Waiting<T> {
  items: readonly T[]
  resolve: () => void
  reject: (error: Error) => void
}

/** How a {@link TurnBatch} writes. */
export interface TurnBatchOptions<T> {
  /** Writes the items of one or more requests in one store call (one transaction). */
  write(items: readonly T[]): Promise<void>
  /**
   * Whether a failed group of several requests is written again one request per call, so only the
   * request whose data the store refused is refused. @default never: the whole group is refused
   */
  writeEachOn?(error: unknown): boolean
}

/**
 * Ingest's one batcher: the items of every request that reaches it in the same turn of the event
 * loop are written in one store call, so one wait for the disk serves them all. The deliveries of
 * accepted messages ({@link GroupCommit}) and tracking plans' violations both go through one.
 *
 * Each request's promise settles only after the write holding its items: resolved once written,
 * rejected with the write's error if it failed. No timer: the group is written in a
 * `setImmediate`, after Node has handled every socket that was ready. While a write waits for the
 * disk, new requests queue up in the kernel and the next turn gathers them all, so the group grows
 * with the load and adds no delay when idle.
 */
export class TurnBatch<T> {
  readonly #options: TurnBatchOptions<T>
  #waiting: Waiting<T>[] = []
  #scheduled: NodeJS.Immediate | undefined
  /** Groups being written now (`flush` waits for them). */
  readonly #writing = new Set<Promise<void>>()

  constructor(options: TurnBatchOptions<T>) {
    this.#options = options
  }

  /** Resolves once `items` are written; rejects if the write holding them failed. */
  add(items: readonly T[]): Promise<void> {
    if (items.length === 0) return Promise.resolve()
    return new Promise((resolve, reject) => {
      this.#waiting.push({ items, resolve, reject })
      this.#scheduled ??= setImmediate(() => void this.flush())
    })
  }

  /**
   * Writes the waiting group now, and resolves once it and every group already being written are
   * settled (called before the database closes). Never rejects: each request hears of its own
   * group's failure.
   */
  async flush(): Promise<void> {
    clearImmediate(this.#scheduled)
    this.#scheduled = undefined
    const group = this.#waiting
    if (group.length > 0) {
      this.#waiting = []
      const writing = this.#write(group)
      this.#writing.add(writing)
      void writing.finally(() => this.#writing.delete(writing))
    }
    await Promise.all(this.#writing)
  }

  async #write(group: readonly Waiting<T>[]): Promise<void> {
    try {
      await this.#options.write(group.length === 1 ? group[0]!.items : group.flatMap((w) => w.items))
    } catch (error) {
      if (group.length > 1 && this.#options.writeEachOn?.(error) === true) return this.#writeEach(group)
      for (const w of group) w.reject(error as Error)
      return
    }
    for (const w of group) w.resolve()
  }

  // One call per request, one after the other: rare (a group with data the store refused), and
  // never many at once on the database.
  async #writeEach(group: readonly Waiting<T>[]): Promise<void> {
    for (const w of group) {
      try {
        await this.#options.write(w.items)
        w.resolve()
      } catch (error) {
        w.reject(error as Error)
      }
    }
  }
}
