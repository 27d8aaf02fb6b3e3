import { randomUUID } from 'node:crypto'
import { log } from '../../../log'
import type { Notifications } from '../../../store/notifications/channel'
import { STREAM_KINDS, type StreamEvent } from './events'
import type { LiveStream } from './live-stream'
import { decodeNotice, encodeNotices } from './notify-codec'

/** The topic the relays' stream events travel on, in batches ({@link encodeNotices}). */
export const STREAM_TOPIC = 'tracklet:stream'
/** The topic each relay says on how many stream readers it has, and asks the others. */
export const READERS_TOPIC = 'tracklet:stream-readers'

/**
 * A relay with readers says so again this often, ms; one not heard of for three times this is
 * taken to have none (it stopped without saying so).
 */
export const READERS_HEARTBEAT_MS = 10_000
const READERS_EXPIRE_MS = 3 * READERS_HEARTBEAT_MS
/**
 * Events waiting to be sent to the other relays while a send is under way (the database is slow):
 * past this they are skipped, and counted in the next batch for the readers to be told.
 */
export const MAX_OUTBOUND_EVENTS = 10_000

/** What a relay says on {@link READERS_TOPIC}: its readers now, or a request that the others say theirs. */
interface ReadersNotice {
  from: string
  readers?: number
  ask?: true
}

/**
 * Every relay on a PostgreSQL store contributes to each relay's live stream, through the relay's
 * one notification channel. Costs nothing while no relay has a reader: a relay sends its events
 * only while another relay has said it has readers ({@link READERS_TOPIC}), and listens to
 * {@link STREAM_TOPIC} only while it has readers itself. Events are batched per turn of the
 * event loop into payloads under the 8,000-byte limit; none is sampled. A database slower than
 * the events costs at most {@link MAX_OUTBOUND_EVENTS} events of memory, then they are skipped
 * and the readers told (`skipped { count }`).
 */
export class StreamFanIn {
  readonly #live: LiveStream
  readonly #notifications: Notifications
  readonly #id = randomUUID()
  /** The other relays with readers, each with the timer that forgets it if it falls silent. */
  readonly #readingRelays = new Map<string, NodeJS.Timeout>()
  #outbound: StreamEvent[] = []
  #outboundSkipped = 0
  #flushing = false
  #flushScheduled = false
  #heartbeat: NodeJS.Timeout | undefined
  #stopListening: Promise<() => Promise<void>> | undefined
  #stopReaders: (() => Promise<void>) | undefined
  #stopped = false

  constructor(live: LiveStream, notifications: Notifications) {
    this.#live = live
    this.#notifications = notifications
  }

  /** Hears the other relays' reader counts, and asks them for theirs. */
  async start(): Promise<void> {
    this.#stopReaders = await this.#notifications.listen(READERS_TOPIC, (payload) => this.#heardReaders(payload))
    this.#live.onReadersChanged((readers) => this.#readersChanged(readers))
    // Readers that came before this started are told of now.
    if (this.#live.readers > 0) this.#readersChanged(this.#live.readers)
    await this.#say({ from: this.#id, ask: true })
  }

  async stop(): Promise<void> {
    this.#stopped = true
    this.#live.onReadersChanged(undefined)
    this.#live.forwardTo(undefined)
    clearInterval(this.#heartbeat)
    for (const timer of this.#readingRelays.values()) clearTimeout(timer)
    this.#readingRelays.clear()
    if (this.#live.readers > 0) await this.#say({ from: this.#id, readers: 0 })
    await this.#stopReaders?.()
    await (await this.#stopListening?.catch(() => undefined))?.()
  }

  #readersChanged(readers: number): void {
    if (this.#stopped) return
    void this.#say({ from: this.#id, readers })
    if (readers > 0 && this.#heartbeat === undefined) {
      this.#heartbeat = setInterval(
        () => void this.#say({ from: this.#id, readers: this.#live.readers }),
        READERS_HEARTBEAT_MS,
      )
      this.#heartbeat.unref()
      this.#stopListening = this.#notifications.listen(STREAM_TOPIC, (payload) => this.#heardEvents(payload))
      this.#stopListening.catch((error: unknown) => this.#failed('listen to the other relays’ events', error))
    } else if (readers === 0 && this.#heartbeat !== undefined) {
      clearInterval(this.#heartbeat)
      this.#heartbeat = undefined
      const listening = this.#stopListening
      this.#stopListening = undefined
      void listening?.then((unlisten) => unlisten()).catch(() => undefined)
    }
  }

  #heardReaders(payload: string): void {
    const notice = parseReaders(payload)
    if (notice === undefined || notice.from === this.#id || this.#stopped) return
    if (notice.ask === true) {
      if (this.#live.readers > 0) void this.#say({ from: this.#id, readers: this.#live.readers })
      return
    }
    clearTimeout(this.#readingRelays.get(notice.from))
    if ((notice.readers ?? 0) > 0) {
      const forget = setTimeout(() => {
        this.#readingRelays.delete(notice.from)
        this.#updateOutbound()
      }, READERS_EXPIRE_MS)
      forget.unref()
      this.#readingRelays.set(notice.from, forget)
    } else {
      this.#readingRelays.delete(notice.from)
    }
    this.#updateOutbound()
  }

  // Events are sent out only while some other relay reads them.
  #updateOutbound(): void {
    this.#live.forwardTo(this.#readingRelays.size > 0 ? (event) => this.#send(event) : undefined)
  }

  #heardEvents(payload: string): void {
    const notice = decodeNotice(payload)
    if (notice === undefined || notice.from === this.#id) return
    for (const event of notice.events) {
      if ((STREAM_KINDS as readonly string[]).includes(event?.kind) && typeof event.data === 'object') {
        this.#live.deliver(event)
      }
    }
    if (notice.skipped > 0) this.#live.skipped(notice.skipped)
  }

  #send(event: StreamEvent): void {
    if (this.#outbound.length >= MAX_OUTBOUND_EVENTS) this.#outboundSkipped++
    else this.#outbound.push(event)
    if (!this.#flushScheduled && !this.#flushing) {
      this.#flushScheduled = true
      // Every event of this turn (a whole ingest batch) in the same notifications.
      setImmediate(() => void this.#flush())
    }
  }

  // One send at a time, so the events keep their order; what comes meanwhile waits for the next.
  async #flush(): Promise<void> {
    this.#flushScheduled = false
    if (this.#flushing || this.#stopped) return
    this.#flushing = true
    try {
      while (this.#outbound.length > 0 || this.#outboundSkipped > 0) {
        const events = this.#outbound
        const skipped = this.#outboundSkipped
        this.#outbound = []
        this.#outboundSkipped = 0
        const payloads = encodeNotices(this.#id, events, undefined, skipped)
        try {
          await this.#notifications.notifyAll(STREAM_TOPIC, payloads)
        } catch (error) {
          // The other relays' readers are told what they missed, with the next batch that goes.
          this.#outboundSkipped += events.length + skipped
          this.#failed('send this relay’s events to the other relays', error)
          return
        }
      }
    } finally {
      this.#flushing = false
    }
  }

  async #say(notice: ReadersNotice): Promise<void> {
    try {
      await this.#notifications.notify(READERS_TOPIC, JSON.stringify(notice))
    } catch (error) {
      this.#failed('tell the other relays of this relay’s stream readers', error)
    }
  }

  #failed(what: string, error: unknown): void {
    if (this.#stopped) return
    log.warn(`live stream: could not ${what}: ${(error as Error).message}`, { event: 'stream-fan-in-failed' })
  }
}

function parseReaders(payload: string): ReadersNotice | undefined {
  try {
    const notice = JSON.parse(payload) as Partial<ReadersNotice>
    return typeof notice.from === 'string' ? (notice as ReadersNotice) : undefined
  } catch {
    return undefined
  }
}
