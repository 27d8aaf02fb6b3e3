import type { DestinationSender } from '../destinations/destination'
import type { DueDelivery } from '../store/store'
import { Batcher } from './batcher'
import type { DeliveryStep } from './delivery-step'
import type { SendOne } from './send'

/**
 * The batches a worker is gathering, one per route (source → destination) at most, for senders
 * whose `batching.maxMessages` is over 1. The first due delivery of a route opens its batch (and
 * is planned by the breaker, holding the lane's slot); the next ones join it while it is open.
 */
export class Gathering {
  /** Route key → its batch still taking messages. */
  readonly #open = new Map<string, Batcher>()
  /** Deliveries that joined a batch and are not settled yet. */
  #joined = 0

  /** Deliveries joined and not settled: the worker is not idle. */
  get busy(): boolean {
    return this.#joined > 0
  }

  /** Some batch is open: a due delivery of its route may join it without a slot of its own. */
  get gathering(): boolean {
    return this.#open.size > 0
  }

  /** Counts a joined delivery in (+1) or out (-1). */
  joined(change: 1 | -1): void {
    this.#joined += change
  }

  /**
   * How to send a delivery into its route's open batch, if one is open and the delivery needs no
   * `step` first (a delivery whose function has not run yet goes through it, then joins).
   */
  open(delivery: DueDelivery, step: DeliveryStep | undefined): SendOne | undefined {
    const batch = this.#open.get(keyOf(delivery))
    if (!batch?.open || step?.of(delivery.source, delivery.destination) !== undefined) return undefined
    return (message) => batch.add(message)
  }

  /**
   * Opens a batch for `delivery`'s route, to `targets` (the breaker's plan), when its sender
   * gathers; `undefined` when it sends one message at a time.
   */
  start(delivery: DueDelivery, sender: DestinationSender, targets: readonly string[] | undefined): SendOne | undefined {
    if (sender.batching.maxMessages <= 1) return undefined
    const key = keyOf(delivery)
    const subset = targets !== undefined && targets.length < sender.targets.length ? targets : undefined
    const batch: Batcher = new Batcher(sender, subset, () => {
      if (this.#open.get(key) === batch) this.#open.delete(key)
    })
    this.#open.set(key, batch)
    return (message) => batch.add(message)
  }

  /** Sends every batch still gathering (the worker stops). */
  flushAll(): void {
    for (const batch of [...this.#open.values()]) batch.flush()
  }
}

// Source and destination names hold no newline.
function keyOf(delivery: DueDelivery): string {
  return `${delivery.source}\n${delivery.destination}`
}
