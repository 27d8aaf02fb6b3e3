import type { ServerResponse } from 'node:http'
import { RELAY_DEFAULTS } from '../../../config/defaults'
import type { ForwardedMessage, StreamEvent, StreamKind } from './events'
import { KEEPALIVE_MS, READER_BUFFER_BYTES, SseReader, sseFrame } from './sse-reader'

/** What a reader asked for: the kinds it wants, and one source or all. */
export interface StreamFilter {
  kinds: ReadonlySet<StreamKind>
  source?: string | undefined
  /** The source whose messages this reader also gets, formatted and signed (`forward=`). */
  forward?: string | undefined
}

/** An open reader of a {@link LiveStream}: stop it when its request ends. */
export interface StreamSubscription {
  close(): void
}

interface Subscriber {
  reader: SseReader
  filter: StreamFilter
}

/**
 * The live stream of one relay: ingest and delivery {@link publish} what happens, and each reader
 * gets the events its filter asks for. With no reader, {@link listening} is false and publishers
 * build nothing (the stream costs nothing then); a reader's slowness costs only that reader (its
 * {@link SseReader} skips, never waits). At most `maxReaders` at once.
 */
export class LiveStream {
  readonly #maxReaders: number
  readonly #readerBufferBytes: number
  readonly #subscribers = new Set<Subscriber>()
  /** Events of this relay, for the other relays on the store (set when the store carries them). */
  #outbound: ((event: StreamEvent) => void) | undefined
  #keepAlive: NodeJS.Timeout | undefined
  /** Told how many readers this relay has, each time that changes (the fan-in advertises it). */
  #readersChanged: ((readers: number) => void) | undefined

  constructor(options: { maxReaders?: number; readerBufferBytes?: number } = {}) {
    this.#maxReaders = options.maxReaders ?? RELAY_DEFAULTS.streamReaders
    this.#readerBufferBytes = options.readerBufferBytes ?? READER_BUFFER_BYTES
  }

  /** Whether anyone reads: publishers check this before building an event. */
  get listening(): boolean {
    return this.#subscribers.size > 0 || this.#outbound !== undefined
  }

  /** Readers connected to this relay now. */
  get readers(): number {
    return this.#subscribers.size
  }

  /** Sends this relay's events to the other relays on the store too (`undefined` stops it). */
  forwardTo(outbound: ((event: StreamEvent) => void) | undefined): void {
    this.#outbound = outbound
  }

  /** Calls `listener` with this relay's reader count each time it changes. */
  onReadersChanged(listener: ((readers: number) => void) | undefined): void {
    this.#readersChanged = listener
  }

  /**
   * Starts an SSE answer on `res` for `filter`, or answers nothing and returns `undefined` when
   * `maxReaders` read already (the caller answers 503).
   */
  open(res: ServerResponse, filter: StreamFilter): StreamSubscription | undefined {
    if (this.#subscribers.size >= this.#maxReaders) return undefined
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      // Proxies such as nginx buffer a response unless told not to: events would arrive in lumps.
      'x-accel-buffering': 'no',
    })
    // The headers now, so the reader knows it is connected before the first event.
    res.flushHeaders()
    const subscriber: Subscriber = { reader: new SseReader(res, this.#readerBufferBytes), filter }
    this.#subscribers.add(subscriber)
    this.#keepAlive ??= setInterval(() => {
      for (const { reader } of this.#subscribers) reader.keepAlive()
    }, KEEPALIVE_MS).unref()
    const close = () => {
      if (!this.#subscribers.delete(subscriber)) return
      if (this.#subscribers.size === 0) this.#stopKeepAlive()
      this.#readersChanged?.(this.#subscribers.size)
    }
    res.once('close', close)
    this.#readersChanged?.(this.#subscribers.size)
    return { close }
  }

  /** An event of this relay: to its readers, and to the other relays on the store. */
  publish(event: StreamEvent): void {
    this.#outbound?.(event)
    this.deliver(event)
  }

  /** An event (of this relay or another on the store) to this relay's readers whose filter takes it. */
  deliver(event: StreamEvent): void {
    if (this.#subscribers.size === 0) return
    let frame: string | undefined
    for (const { reader, filter } of this.#subscribers) {
      if (!filter.kinds.has(event.kind)) continue
      if (filter.source !== undefined && event.data.source !== filter.source) continue
      frame ??= sseFrame(event.kind, event.data)
      reader.offer(frame)
    }
  }

  /** `count` events of other relays were skipped before they reached this relay: every reader is told. */
  skipped(count: number): void {
    for (const { reader } of this.#subscribers) reader.skip(count)
  }

  /** Whether a reader forwards `source`'s messages: only then is a message formatted and signed for it. */
  forwarding(source: string): boolean {
    for (const { filter } of this.#subscribers) if (filter.forward === source) return true
    return false
  }

  /** A message of `source`, formatted and signed, to the readers that forward that source. */
  deliverMessage(source: string, message: ForwardedMessage): void {
    let frame: string | undefined
    for (const { reader, filter } of this.#subscribers) {
      if (filter.forward !== source) continue
      frame ??= sseFrame('message', message)
      reader.offer(frame)
    }
  }

  /** Ends every reader's response (the relay is closing). */
  close(): void {
    this.#stopKeepAlive()
    this.#outbound = undefined
    this.#readersChanged = undefined
    for (const subscriber of [...this.#subscribers]) subscriber.reader.end()
    this.#subscribers.clear()
  }

  #stopKeepAlive(): void {
    clearInterval(this.#keepAlive)
    this.#keepAlive = undefined
  }
}
