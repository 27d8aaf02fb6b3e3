import { redactUrl } from '../../shared/redact-url'
import { log, plural } from '../log'
import type { CircuitStore } from '../store/circuits'
import { nextBackoff } from './timing'

/** What the parking lot needs from the worker that owns it. */
export interface ParkingHost {
  owner: string
  now: () => number
  /** These deliveries are parked: this worker holds them no more. */
  parked(ids: readonly number[]): void
  /** These were not parked (a circuit of `urls` closed meanwhile): still leased to this worker. */
  refused(ids: readonly number[], urls: readonly string[]): void
  /** A write ended: the worker may have become idle. */
  settled(): void
}

interface Waiting {
  urls: readonly string[]
  error: string
  ids: number[]
}

// Parks are written together, at most this often: one statement for many deliveries.
const PARK_INTERVAL_MS = 5
/**
 * A parked delivery is looked at again after this long at the latest, even if no probe succeeded.
 * A circuit's closing wakes its deliveries in the same transaction, so this is only for deliveries
 * whose URLs changed in the configuration meanwhile; each look costs a claim and a park of every
 * waiting delivery, so it is rare.
 */
export const PARK_RECHECK_MS = 5 * 60_000

/**
 * Holds back, in the store, deliveries whose every URL's circuit is open: no attempt, the reason
 * in the delivery log, due again when their retry window ends (or after {@link PARK_RECHECK_MS}).
 * A closing circuit wakes them. Writes are batched; a failed write is tried again later, the
 * deliveries meanwhile still leased to (and renewed by) this worker.
 */
export class Parking {
  readonly #circuits: CircuitStore
  readonly #window: number
  readonly #host: ParkingHost
  /** Deliveries to park, grouped by their URLs and the reason shown. */
  #waiting = new Map<string, Waiting>()
  #timer: NodeJS.Timeout | undefined
  #writing: Promise<void> | undefined
  #retryMs = 0
  #stopped = false

  constructor(circuits: CircuitStore, window: number, host: ParkingHost) {
    this.#circuits = circuits
    this.#window = window
    this.#host = host
  }

  /** Work is queued or being written. */
  get busy(): boolean {
    return this.#waiting.size > 0 || this.#writing !== undefined
  }

  /** Parks the delivery `id` (leased to this worker), which goes to `urls`, showing `error` meanwhile. */
  add(id: number, urls: readonly string[], error: string): void {
    const key = JSON.stringify([urls, error])
    const group = this.#waiting.get(key) ?? { urls, error, ids: [] }
    group.ids.push(id)
    this.#waiting.set(key, group)
    if (!this.#stopped) this.#timer ??= setTimeout(() => void this.flush(), PARK_INTERVAL_MS)
  }

  /** Writes what is queued now (and waits for a write under way). */
  async flush(): Promise<void> {
    clearTimeout(this.#timer)
    this.#timer = undefined
    if (this.#writing !== undefined) return this.#writing
    if (this.#waiting.size === 0) return
    const batch = this.#waiting
    this.#waiting = new Map()
    this.#writing = this.#write(batch)
    await this.#writing
    this.#writing = undefined
    if (this.#waiting.size > 0 && !this.#stopped) {
      this.#timer ??= setTimeout(() => void this.flush(), this.#retryMs || PARK_INTERVAL_MS)
    }
    this.#host.settled()
  }

  /** Stops the timer after writing what is queued; what cannot be written stays leased until expiry. */
  async stop(): Promise<void> {
    await this.flush()
    this.#stopped = true
    clearTimeout(this.#timer)
  }

  async #write(batch: Map<string, Waiting>): Promise<void> {
    for (const [key, group] of batch) {
      const now = this.#host.now()
      try {
        const parked = await this.#circuits.park({
          ids: group.ids,
          owner: this.#host.owner,
          urls: group.urls,
          now,
          until: now + PARK_RECHECK_MS,
          window: this.#window,
          error: group.error,
        })
        batch.delete(key)
        this.#retryMs = 0
        const done = new Set(parked)
        if (parked.length > 0) {
          log.info(
            `${plural(parked.length, 'delivery waits', 'deliveries wait')} without an attempt: the circuit of each of their URLs is open (${group.urls.map(redactUrl).join(', ')})`,
            { event: 'parked', count: parked.length },
          )
          this.#host.parked(parked)
        }
        const refused = group.ids.filter((id) => !done.has(id))
        if (refused.length > 0) this.#host.refused(refused, group.urls)
      } catch (error) {
        this.#retryMs = nextBackoff(this.#retryMs)
        log.error(
          `could not park ${plural(group.ids.length, 'delivery', 'deliveries')}: ${(error as Error).message}; writing again in ${this.#retryMs} ms`,
          { event: 'park-failed' },
        )
        break
      }
    }
    // What was not written goes back in the queue, before what came meanwhile.
    for (const [key, group] of batch) {
      const later = this.#waiting.get(key)
      this.#waiting.set(key, later === undefined ? group : { ...group, ids: [...group.ids, ...later.ids] })
    }
  }
}
