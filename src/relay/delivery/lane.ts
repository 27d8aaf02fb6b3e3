import type { DueDelivery } from '../store/store'
import { nextBackoff } from './timing'

/**
 * What a lane is doing about claiming, one at a time:
 * - `idle`: nothing planned; a wake (new deliveries, a settled attempt) schedules a pump.
 * - `scheduled`: a pump runs on the next turn of the event loop (many wakes make one pump).
 * - `claiming`: a claim is under way; `again` asks for another pump once it ends.
 * - `sleeping`: a timer pumps when the next retry is due (`next-due`) or, after a failed claim,
 *   when the back-off ends (`backing-off`).
 */
export type LaneState =
  | { name: 'idle' }
  | { name: 'scheduled' }
  | { name: 'claiming'; again: boolean }
  | { name: 'sleeping'; why: 'next-due' | 'backing-off'; timer: NodeJS.Timeout }

/**
 * One source's share of the worker: its claimed deliveries, its attempts in flight, and the state
 * of its claiming. Each source has its own lane, so a slow receiver fills only its own lane's slots
 * and the other sources' deliveries keep flowing. Every change of state goes through a method here.
 */
export class Lane {
  readonly source: string
  /** Attempts running now: at most the worker's `concurrency`. */
  running = 0
  /** Claimed deliveries waiting for a free slot (claimed in chunks, not one query per slot). */
  buffer: DueDelivery[] = []
  #state: LaneState = { name: 'idle' }
  /** The wait before claiming again after a failed claim, ms; 0 while claims succeed. */
  #claimRetryMs = 0

  constructor(source: string) {
    this.source = source
  }

  get state(): LaneState {
    return this.#state
  }

  /** A pump is scheduled or a claim under way: the worker is not idle. */
  get busy(): boolean {
    return this.#state.name === 'scheduled' || this.#state.name === 'claiming'
  }

  /**
   * Asks for a pump: `run` is called on the next turn, once however often this is asked meanwhile.
   * During a claim, the claim pumps again when it ends instead.
   */
  schedule(run: () => void): void {
    const state = this.#state
    if (state.name === 'scheduled') return
    if (state.name === 'claiming') {
      state.again = true
      return
    }
    this.#enter({ name: 'scheduled' })
    setImmediate(() => {
      if (this.#state.name === 'scheduled') this.#state = { name: 'idle' }
      run()
    })
  }

  /** A claim starts (from `idle` or `scheduled`; a timer asleep is cleared). */
  claim(): void {
    this.#enter({ name: 'claiming', again: false })
  }

  /** During a claim: pump again once it ends (the claim filled its chunk: more may be due). */
  claimAgain(): void {
    if (this.#state.name === 'claiming') this.#state.again = true
  }

  /** The claim succeeded: the back-off after failed claims starts over. */
  claimSucceeded(): void {
    this.#claimRetryMs = 0
  }

  /** The claim failed: the wait before the next, ms (doubling from 50 ms to 30 s). */
  claimFailed(): number {
    this.#claimRetryMs = nextBackoff(this.#claimRetryMs)
    return this.#claimRetryMs
  }

  /**
   * The claim ended: `idle`, or `sleeping` for `sleep.ms` when given. Returns whether a pump was
   * asked for meanwhile (the caller schedules it, which cuts a sleep short).
   */
  endClaim(sleep: { ms: number; why: 'next-due' | 'backing-off'; pump: () => void } | undefined): boolean {
    const again = this.#state.name === 'claiming' && this.#state.again
    if (sleep === undefined) {
      this.#enter({ name: 'idle' })
    } else {
      const timer = setTimeout(sleep.pump, sleep.ms)
      // Unref'd: a pending retry never keeps the process up.
      timer.unref()
      this.#enter({ name: 'sleeping', why: sleep.why, timer })
    }
    return again
  }

  /** Takes the first claimed delivery to `destination` out of the buffer (to carry a probe), if any. */
  take(destination: string): DueDelivery | undefined {
    const index = this.buffer.findIndex((d) => d.destination === destination)
    return index < 0 ? undefined : this.buffer.splice(index, 1)[0]
  }

  /** No more pumps: the timer asleep, if any, is cleared, and the waiting deliveries returned. */
  stop(): DueDelivery[] {
    if (this.#state.name === 'sleeping') this.#enter({ name: 'idle' })
    const waiting = this.buffer
    this.buffer = []
    return waiting
  }

  #enter(next: LaneState): void {
    if (this.#state.name === 'sleeping') clearTimeout(this.#state.timer)
    this.#state = next
  }
}
