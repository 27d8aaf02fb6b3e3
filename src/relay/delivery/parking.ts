import { redactUrl } from '../../shared/redact-url'
import { log, plural } from '../log'
import type { CircuitStore } from '../store/circuits'
import { BatchedWriter, eachInTurn } from './batched-writer'

/** What the parking lot needs from the breaker that owns it (and the worker behind). */
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
 * A closing circuit wakes them. Writes are batched ({@link BatchedWriter}); a failed write is tried
 * again later, the deliveries meanwhile still leased to (and renewed by) this worker.
 */
export class Parking {
  readonly #circuits: CircuitStore
  readonly #window: number
  readonly #host: ParkingHost
  /** Deliveries to park, grouped by their URLs and the reason shown. */
  readonly #writer: BatchedWriter<string, Waiting>

  constructor(circuits: CircuitStore, window: number, host: ParkingHost) {
    this.#circuits = circuits
    this.#window = window
    this.#host = host
    this.#writer = new BatchedWriter({
      write: eachInTurn((_key, group) => this.#park(group)),
      // What was not written goes back in the queue, before what came meanwhile.
      merge: (kept, since) => (since === undefined ? kept : { ...kept, ids: [...kept.ids, ...since.ids] }),
      failed: (error, left, retryMs) => {
        const count = left.values().next().value?.ids.length ?? 0
        log.error(
          `could not park ${plural(count, 'delivery', 'deliveries')}: ${error.message}; writing again in ${retryMs} ms`,
          { event: 'park-failed' },
        )
      },
      settled: () => host.settled(),
    })
  }

  /** Work is queued or being written. */
  get busy(): boolean {
    return this.#writer.busy
  }

  /** Parks the delivery `id` (leased to this worker), which goes to `urls`, showing `error` meanwhile. */
  add(id: number, urls: readonly string[], error: string): void {
    this.#writer.add(JSON.stringify([urls, error]), (group) => {
      const waiting = group ?? { urls, error, ids: [] }
      waiting.ids.push(id)
      return waiting
    })
  }

  /** Writes what is queued now (and waits for a write under way). */
  flush(): Promise<void> {
    return this.#writer.flush()
  }

  /** Stops the timer after writing what is queued; what cannot be written stays leased until expiry. */
  stop(): Promise<void> {
    return this.#writer.stop()
  }

  async #park(group: Waiting): Promise<void> {
    const now = this.#host.now()
    const parked = await this.#circuits.park({
      ids: group.ids,
      owner: this.#host.owner,
      urls: group.urls,
      now,
      until: now + PARK_RECHECK_MS,
      window: this.#window,
      error: group.error,
    })
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
  }
}
