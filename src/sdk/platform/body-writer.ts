import type { Batch } from '../batch'
import { BodyBuffers } from '../body-buffers'

/** A batch's request body, and what to call once nothing reads it any more (after a 2xx). */
export interface WrittenBody {
  bytes: Uint8Array
  release(): void
}

/**
 * Writes request bodies into buffers reused from one request to the next (Node's `Buffer`): a
 * fresh buffer per request costs more than writing the body into it (see `BodyBuffers`).
 */
export class BodyWriter {
  readonly #buffers: BodyBuffers

  /** @param keep buffers kept for reuse: one per request in flight, or 0 when the transport may hold a body. */
  constructor(keep: number) {
    this.#buffers = new BodyBuffers(keep)
  }

  write(batch: Batch): WrittenBody {
    const buffer = this.#buffers.acquire(batch.bodyBytes)
    return { bytes: batch.encodeBody(buffer), release: () => this.#buffers.release(buffer) }
  }
}
