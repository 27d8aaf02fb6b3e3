import type { DueDelivery } from '../store/store'
import { type DeliveryStep, type RouteStep, runStep } from './delivery-step'
import type { AttemptResult } from './destination'
import type { Lane } from './lane'
import { unsentBy } from './send'

/** What running the deliveries' steps needs from the worker. */
export interface PreparedStepsHost {
  /** The step each delivery passes through before it takes a URL's slot, when there are functions. */
  step: DeliveryStep | undefined
  now: () => number
  /** The worker is closing: what a step chose to send is not started. */
  stopping(): boolean
  /** The step ended the delivery unsent: judged and queued like an attempt, freeing the lane's slot. */
  finish(lane: Lane, delivery: DueDelivery, at: number, attempt: AttemptResult): void
  /** Gives the lease of delivery `id` back (the worker stopped while its step ran). */
  release(id: number): Promise<void>
  /** The lane has a delivery to look at again (one whose step ran). */
  pump(lane: Lane): void
  /** A step ended: the worker may have become idle. */
  settled(): void
  /** Running the step of `delivery` threw: its outcome is a crash. */
  crashed(lane: Lane, delivery: DueDelivery, error: unknown): void
}

/**
 * Runs each delivery's step (its function) once, before the delivery is planned and sent, and
 * remembers which deliveries already ran theirs with the `console` lines they printed: a delivery
 * that comes back to the lane after its step must not run it again, and its lines go with its attempt.
 */
export class PreparedSteps {
  readonly #host: PreparedStepsHost
  /** Deliveries whose step ran (before a URL's slot): each maps to its function's `console` lines. */
  readonly #prepared = new WeakMap<DueDelivery, readonly string[] | undefined>()

  constructor(host: PreparedStepsHost) {
    this.#host = host
  }

  /** The step `delivery` has still to run; `undefined` once it ran, or without functions. */
  of(delivery: DueDelivery): RouteStep | undefined {
    return this.#prepared.has(delivery) ? undefined : this.#host.step?.of(delivery.source, delivery.destination)
  }

  /** The steps a gathering batch runs `delivery` through: none once it ran its own. */
  pending(delivery: DueDelivery): DeliveryStep | undefined {
    return this.#prepared.has(delivery) ? undefined : this.#host.step
  }

  /** The `console` lines of the step `delivery` ran, if it printed any. */
  logs(delivery: DueDelivery): readonly string[] | undefined {
    return this.#prepared.get(delivery)
  }

  /**
   * Runs the delivery's step holding a slot of its source's lane only, never a URL's: a function
   * that loops until functionTimeout delays no other source sending to the same URL. What it chose
   * to send goes back to the front of the lane, to be planned and sent like any other.
   */
  prepare(lane: Lane, delivery: DueDelivery, step: RouteStep): void {
    const prepared = async () => {
      const ready = await this.stepped(lane, delivery, step)
      if (ready !== undefined) {
        lane.buffer.unshift(ready)
        this.#host.pump(lane)
      }
      this.#host.settled()
    }
    prepared().catch((error: unknown) => this.#host.crashed(lane, delivery, error))
  }

  /**
   * The delivery after its step, ready to send; `undefined` when the step ended it (its outcome
   * queued) or the worker is stopping (its lease given back).
   */
  async stepped(lane: Lane, delivery: DueDelivery, step?: RouteStep): Promise<DueDelivery | undefined> {
    if (step === undefined) return delivery
    lane.running++
    const at = this.#host.now()
    const verdict = await runStep(step, delivery.message)
    if (verdict.kind !== 'send') return void this.#host.finish(lane, delivery, at, unsentBy(verdict))
    lane.running--
    if (this.#host.stopping()) return void (await this.#host.release(delivery.id))
    const ready: DueDelivery = { ...delivery, message: verdict.message }
    this.#prepared.set(ready, verdict.logs?.length ? verdict.logs : undefined)
    return ready
  }
}
