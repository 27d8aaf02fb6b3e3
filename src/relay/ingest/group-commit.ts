import { isDataError } from '../store/data-error'
import type { NewDelivery, Store } from '../store/store'

interface Waiting {
  deliveries: readonly NewDelivery[]
  resolve: () => void
  reject: (error: Error) => void
}

/**
 * Group commit for ingest: the deliveries of every request that reaches the commit in the same
 * turn of the event loop are written in one transaction, so one wait for the disk serves them all.
 *
 * Each request's promise settles only after the transaction holding its deliveries: resolved once
 * it is committed, rejected (with the commit's error) if it failed. A group that fails because of
 * its data ({@link isDataError}: one request's message the store cannot hold) is written again one
 * request per transaction, so only the request that carried the data is refused; any other
 * failure (the database is down, the disk full) refuses the whole group at once. A 2xx still
 * means "committed".
 *
 * No timer: the group is written in a `setImmediate`, after Node has handled every socket that
 * was ready. While a commit waits for the disk, new requests queue up in the kernel, and the next
 * turn gathers them all, so the group grows with the load and adds no delay when idle.
 */
export class GroupCommit {
  readonly #store: Store
  #waiting: Waiting[] = []
  #scheduled: NodeJS.Immediate | undefined
  /** Groups being written now (close waits for them). */
  readonly #writing = new Set<Promise<void>>()

  constructor(store: Store) {
    this.#store = store
  }

  /** Resolves once `deliveries` are committed; rejects if the transaction holding them failed. */
  commit(deliveries: readonly NewDelivery[]): Promise<void> {
    if (deliveries.length === 0) return Promise.resolve()
    return new Promise((resolve, reject) => {
      this.#waiting.push({ deliveries, resolve, reject })
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

  async #write(group: readonly Waiting[]): Promise<void> {
    try {
      await this.#store.enqueue(group.length === 1 ? group[0]!.deliveries : group.flatMap((w) => w.deliveries))
    } catch (error) {
      if (group.length > 1 && isDataError(error)) return this.#writeEach(group)
      for (const w of group) w.reject(error as Error)
      return
    }
    for (const w of group) w.resolve()
  }

  // One transaction per request, one after the other: rare (a group with data the store refused),
  // and never many at once on the database.
  async #writeEach(group: readonly Waiting[]): Promise<void> {
    for (const w of group) {
      try {
        await this.#store.enqueue(w.deliveries)
        w.resolve()
      } catch (error) {
        w.reject(error as Error)
      }
    }
  }
}
