import { MAX_BATCH_BYTES } from '../shared/limits'

/**
 * Buffers for request bodies, reused from one request to the next. A fresh buffer per request
 * costs more than writing the body into it: the allocation, the pages the kernel hands out and
 * takes back for it, and its collection later, which also lets peak RSS grow (see `bench/`).
 */
export class BodyBuffers {
  /** Buffers free for the next request. */
  readonly #free: Buffer[] = []
  /** Most buffers kept: one per request in flight is all a steady stream needs. */
  readonly #keep: number
  /** Size of each buffer: the largest body a batch makes. */
  readonly #size: number

  constructor(keep: number, size = MAX_BATCH_BYTES) {
    this.#keep = keep
    this.#size = size
  }

  /** A buffer of at least `bytes` bytes, with whatever it held before. */
  acquire(bytes: number): Buffer {
    if (bytes > this.#size) return Buffer.allocUnsafeSlow(bytes)
    return this.#free.pop() ?? Buffer.allocUnsafeSlow(this.#size)
  }

  /**
   * Hands `buffer` back once nothing reads it any more; it will be overwritten by a later
   * request. Buffers of another size, and those past `keep`, are left to the collector.
   */
  release(buffer: Buffer): void {
    if (buffer.length === this.#size && this.#free.length < this.#keep) this.#free.push(buffer)
  }
}
