import { nextBackoff } from './timing'

/**
 * How long the first entry of a batch waits for others, ms: one write (one transaction) for many
 * entries. Losing what is unwritten in a crash costs no message: outcomes unwritten are sent
 * again (at-least-once), reports and parks are only counted or looked at again.
 */
export const BATCH_INTERVAL_MS = 5

/** How a {@link BatchedWriter} writes and what it tells its owner. */
export interface BatchedWriterOptions<K, V> {
  /**
   * Writes a batch. It deletes from `batch` each entry once written and throws at the first that
   * fails: what is left in `batch` then is kept, ahead of what came since, and written again after
   * a back-off. {@link eachInTurn} builds one that writes an entry at a time.
   */
  write(batch: Map<K, V>): Promise<void>
  /** The wait between a first entry's arrival and the write, ms. @default {@link BATCH_INTERVAL_MS} */
  intervalMs?: number
  /**
   * An entry kept after a failed write, and the entry of the same key that came since (if any): the
   * one to queue. @default the kept one, then the newer one replaces it only when there is one
   */
  merge?: (kept: V, since: V | undefined) => V
  /** A write failed; the next is in `retryMs`. `left` is what was not written (its first entry failed). */
  failed(error: Error, left: ReadonlyMap<K, V>, retryMs: number): void
  /** The whole batch was written; `afterFailures` when an earlier write had failed. */
  wrote?(batch: readonly V[], afterFailures: boolean): void
  /** A write ended (written or not): the owner may have become idle. */
  settled?(): void
}

/**
 * One queue written to a store in batches: entries wait up to an interval, one write runs at a
 * time, what a failed write could not write stays ahead of what came since, and writes after a
 * failure back off (doubling from 50 ms to 30 s). The outcomes of attempts, the breaker's reports
 * and the parking of deliveries all go through one of these.
 */
export class BatchedWriter<K, V> {
  readonly #options: BatchedWriterOptions<K, V>
  readonly #intervalMs: number
  /** Entries waiting for the next write, in arrival order (by key). */
  #queue = new Map<K, V>()
  /** The timer of the next write. */
  #timer: NodeJS.Timeout | undefined
  /** The write under way, if any: one at a time. */
  #writing: Promise<void> | undefined
  /** The wait before writing again after a failed write, ms; 0 while writes succeed. */
  #retryMs = 0
  /** No timer is armed any more: what is queued is written only by `flush()`. */
  #stopped = false

  constructor(options: BatchedWriterOptions<K, V>) {
    this.#options = options
    this.#intervalMs = options.intervalMs ?? BATCH_INTERVAL_MS
  }

  /** Something is queued or being written. */
  get busy(): boolean {
    return this.#queue.size > 0 || this.#writing !== undefined
  }

  /** The last write failed: the next waits for its back-off. */
  get failing(): boolean {
    return this.#retryMs > 0
  }

  /** The entry queued under `key` since the write under way began, if any. */
  queued(key: K): V | undefined {
    return this.#queue.get(key)
  }

  /**
   * Queues `update(the entry queued under key)` under `key`. An `urgent` entry is written at once
   * (unless writes are backing off after a failure).
   */
  add(key: K, update: (queued: V | undefined) => V, urgent = false): void {
    this.#queue.set(key, update(this.#queue.get(key)))
    if (this.#stopped) return
    if (urgent && this.#retryMs === 0) {
      clearTimeout(this.#timer)
      this.#timer = setTimeout(() => void this.flush(), 0)
    } else {
      this.#timer ??= setTimeout(() => void this.flush(), this.#intervalMs)
    }
  }

  /** Writes what is queued now; with a write under way, waits for it (which writes what came meanwhile later). */
  async flush(): Promise<void> {
    clearTimeout(this.#timer)
    this.#timer = undefined
    if (this.#writing !== undefined) return this.#writing
    if (this.#queue.size === 0) return
    const batch = this.#queue
    this.#queue = new Map()
    this.#writing = this.#write(batch)
    await this.#writing
    this.#writing = undefined
    if (this.#queue.size > 0 && !this.#stopped) {
      this.#timer ??= setTimeout(() => void this.flush(), this.#retryMs || this.#intervalMs)
    }
    this.#options.settled?.()
  }

  /** Waits for the write under way, writes what is queued once more, and arms no timer again. */
  async stop(): Promise<void> {
    this.#stopped = true
    clearTimeout(this.#timer)
    await this.#writing
    await this.flush()
    clearTimeout(this.#timer)
  }

  async #write(batch: Map<K, V>): Promise<void> {
    const values = [...batch.values()]
    try {
      await this.#options.write(batch)
    } catch (error) {
      this.#retryMs = nextBackoff(this.#retryMs)
      this.#options.failed(error as Error, batch, this.#retryMs)
      // Keep what failed ahead of what came since.
      const merge = this.#options.merge ?? ((kept, since) => since ?? kept)
      const since = this.#queue
      this.#queue = new Map()
      for (const [key, kept] of batch) this.#queue.set(key, merge(kept, since.get(key)))
      for (const [key, value] of since) if (!batch.has(key)) this.#queue.set(key, value)
      return
    }
    const afterFailures = this.#retryMs > 0
    this.#retryMs = 0
    this.#options.wrote?.(values, afterFailures)
  }
}

/** A `write` for {@link BatchedWriter} that writes the entries one at a time, in order, with `writeOne`. */
export function eachInTurn<K, V>(writeOne: (key: K, value: V) => Promise<void>): (batch: Map<K, V>) => Promise<void> {
  return async (batch) => {
    for (const [key, value] of batch) {
      await writeOne(key, value)
      batch.delete(key)
    }
  }
}
