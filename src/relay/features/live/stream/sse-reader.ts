import type { ServerResponse } from 'node:http'

/**
 * How much one reader may hold that its connection has not taken yet, bytes. Past it, events are
 * skipped for that reader alone (and announced): a slow reader never slows ingest or delivery, and
 * costs at most this much memory (plus one event in the socket's own buffer).
 */
export const READER_BUFFER_BYTES = 1024 * 1024

// A comment line now and then keeps proxies from closing an idle stream.
export const KEEPALIVE_MS = 15_000

/** One SSE frame: `event:` its kind, `data:` one line of JSON. */
export function sseFrame(kind: string, data: unknown): string {
  // JSON.stringify never writes a raw line break, so the data is one `data:` line.
  return `event: ${kind}\ndata: ${JSON.stringify(data)}\n\n`
}

/**
 * One reader of the live stream: writes frames to its response while the connection takes them,
 * queues up to `limitBytes` while it does not (the socket's buffer is full until `drain`), and
 * counts what it skips past that. Once it catches up, the skipped count is announced as a
 * `skipped { count }` event, in the place the skipped events would have been.
 */
export class SseReader {
  readonly #res: ServerResponse
  readonly #limitBytes: number
  readonly #queue: string[] = []
  #queuedBytes = 0
  #skipped = 0
  /** The last write returned false: wait for `drain`. */
  #congested = false
  #closed = false

  constructor(res: ServerResponse, limitBytes = READER_BUFFER_BYTES) {
    this.#res = res
    this.#limitBytes = limitBytes
    res.on('drain', () => this.#drain())
    res.once('close', () => {
      this.#closed = true
      this.#queue.length = 0
    })
  }

  /** Whether the reader's connection is gone. */
  get closed(): boolean {
    return this.#closed
  }

  /** Events skipped and not yet announced. */
  get skipped(): number {
    return this.#skipped
  }

  /** Sends `frame` now, or queues it, or skips it: never waits. */
  offer(frame: string): void {
    if (this.#closed) return
    if (!this.#congested && this.#queue.length === 0 && this.#skipped === 0) {
      this.#write(frame)
      return
    }
    if (this.#skipped === 0 && this.#queuedBytes + frame.length <= this.#limitBytes) {
      this.#queue.push(frame)
      this.#queuedBytes += frame.length
      if (!this.#congested) this.#drain()
      return
    }
    if (this.#skipped > 0 && !this.#congested && this.#queue.length === 0) {
      // Caught up since: announce what was skipped, then go on.
      this.#announceSkipped()
      this.offer(frame)
      return
    }
    this.#skipped++
  }

  /**
   * `count` events this reader never saw were skipped before they reached it (another relay's,
   * that fit no notification): announced as soon as what waits is sent.
   */
  skip(count: number): void {
    if (this.#closed || count <= 0) return
    this.#skipped += count
    if (!this.#congested && this.#queue.length === 0) this.#announceSkipped()
  }

  /** Ends the response (the relay is closing). */
  end(): void {
    if (!this.#closed) this.#res.end()
  }

  /** A comment line (ignored by readers): keeps the connection open through proxies. */
  keepAlive(): void {
    if (!this.#closed && !this.#congested && this.#queue.length === 0) this.#write(': keep-alive\n\n')
  }

  #write(frame: string): void {
    if (!this.#res.write(frame)) this.#congested = true
  }

  #announceSkipped(): void {
    const count = this.#skipped
    this.#skipped = 0
    this.#write(sseFrame('skipped', { count }))
  }

  // The connection took what it had: send what waits, then the skipped count.
  #drain(): void {
    this.#congested = false
    while (!this.#congested && this.#queue.length > 0) {
      const frame = this.#queue.shift()!
      this.#queuedBytes -= frame.length
      this.#write(frame)
    }
    if (!this.#congested && this.#skipped > 0) this.#announceSkipped()
  }
}
