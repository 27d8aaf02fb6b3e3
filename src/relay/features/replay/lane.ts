import { log } from '../../log'
import type { ReplayDue, ReplayStore } from '../../store/replays'
import type { ClaimRequest, Store } from '../../store/store'
import type { DestinationSender } from '../../delivery/destination'
import type { DeliveryStep } from '../../delivery/delivery-step'
import { nextBackoff } from '../../delivery/timing'
import { Worker, type WorkerOptions } from '../../delivery/worker'
import type { WorkerStore } from '../../delivery/worker-options'

// How often a relay looks for replay work it was not told of: a replay started through another
// relay, deliveries of a relay that died once their leases run out, a replay resumed elsewhere.
const REPLAY_POLL_MS = 1000

/** What a replay lane needs: the live worker's settings, and the outbox it shares. */
export interface ReplayLaneOptions
  extends Pick<WorkerOptions, 'destinations' | 'retries' | 'concurrency' | 'leaseTimeout' | 'step' | 'limits'> {
  store: Pick<Store, 'replays' | 'renew' | 'release' | 'record'>
}

/** The replay lane of one relay (docs/replay.md). */
export interface ReplayLane {
  start(): void
  /** The sources or their destinations changed (the live maps were updated in place). */
  sourcesChanged(): void
  /** A replay was started or resumed, or deliveries queued: look for work now. */
  wake(): void
  /** Stops queueing and claiming; replay deliveries in flight get `graceMs` to finish. */
  drain(graceMs: number): Promise<void>
}

/**
 * Replays beside live traffic: their new deliveries are made at each replay's pace (the store
 * keeps it, so it holds across relays) and sent by a worker of their own, with its own slots
 * (`concurrency` per source) and leases, through the same destinations and functions as live
 * deliveries. A replay to one URL goes to that URL alone. The live worker never claims a replay's
 * delivery, so a slow or stalled replay never takes a live delivery's slot.
 */
export function createReplayLane(options: ReplayLaneOptions): ReplayLane {
  const { store } = options
  const targets = new ReplayTargets(options.destinations)
  const outbox: WorkerStore = {
    claim: async (request: ClaimRequest) => targets.route(await store.replays.claim(request)),
    nextDueIn: (source) => store.replays.nextDueIn(source),
    renew: (...args) => store.renew(...args),
    release: (...args) => store.release(...args),
    record: (outcomes) => store.record(outcomes),
  }
  const worker = new Worker({
    ...options,
    store: outbox,
    destinations: targets.destinations,
    step: stepByTarget(options.step),
  })
  const queuer = new ReplayQueuer(store.replays, () => worker.wake())
  return {
    start: () => queuer.start(),
    sourcesChanged: () => {
      targets.refresh()
      worker.sourcesChanged()
    },
    wake: () => {
      queuer.wake()
      worker.wake()
    },
    drain: async (graceMs) => {
      await queuer.stop()
      await worker.stop(graceMs)
    },
  }
}

/**
 * The destinations a replay's deliveries go to, by a key of their own: the destination's name for
 * a replay to all its URLs, or the name and one URL for a replay to that URL (the same destination,
 * asked to send there alone). Each key runs the destination's function.
 */
class ReplayTargets {
  readonly destinations = new Map<string, Map<string, DestinationSender>>()
  readonly #live: WorkerOptions['destinations']

  constructor(live: WorkerOptions['destinations']) {
    this.#live = live
    this.refresh()
  }

  /**
   * Reads the live destinations again (a source added, changed or removed while the relay runs),
   * in place: the worker holds these maps. The one-URL keys are made again at their next claim,
   * from the settings of that moment.
   */
  refresh(): void {
    this.destinations.clear()
    for (const source of this.#live.keys()) {
      this.destinations.set(source, new Map(this.#live.get(source)))
    }
  }

  /** The claimed deliveries, each with the key of its target as its destination. */
  route(claimed: readonly ReplayDue[]): ReplayDue[] {
    return claimed.map((delivery) => {
      if (delivery.url === undefined) return delivery
      const key = `${delivery.destination} ${delivery.url}`
      const live = this.#live.get(delivery.source)?.get(delivery.destination)
      const byKey = this.destinations.get(delivery.source)
      if (live !== undefined && byKey !== undefined && !byKey.has(key)) {
        byKey.set(key, toOneUrl(live, delivery.url))
      }
      return { ...delivery, destination: key }
    })
  }
}

// The step of a replay's target is its destination's (a replay to one URL runs the destination's
// function too): the key of a one-URL target is `<destination> <url>`, and names have no space.
function stepByTarget(step: DeliveryStep | undefined): DeliveryStep | undefined {
  if (step === undefined) return undefined
  return { of: (source, key) => step.of(source, key.split(' ')[0]!) }
}

// `destination`, sending to `url` alone. A URL no longer among the destination's targets (its
// settings changed since the replay started) is a delivery it can never send: the attempt says so.
function toOneUrl(destination: DestinationSender, url: string): DestinationSender {
  return {
    targets: [url],
    // A replay's copies count against the URL's limits as live deliveries do.
    ...(destination.limits === undefined ? {} : { limits: destination.limits }),
    batching: destination.batching,
    retries: destination.retries,
    sendBatch: async (batch) => {
      if (!destination.targets.includes(url)) {
        const error = `the destination threw: ${url} is no longer one of the destination's URLs`
        return batch.map(() => ({ kind: 'failed', retryable: false, error }))
      }
      return destination.sendBatch(batch, { targets: [url] })
    },
    // The live destination's: closed with it.
    close: async () => {},
  }
}

/**
 * Makes the running replays' deliveries, one store step at a time, as often as their pace allows
 * (the store says when the next is due), and wakes the lane's worker when it made some.
 */
class ReplayQueuer {
  readonly #replays: ReplayStore
  readonly #queued: () => void
  #timer: NodeJS.Timeout | undefined
  #stepping: Promise<void> | undefined
  #again = false
  #failedMs = 0
  #stopped = false

  constructor(replays: ReplayStore, queued: () => void) {
    this.#replays = replays
    this.#queued = queued
  }

  start(): void {
    this.wake()
  }

  /** Steps now (after the step under way, if any). */
  wake(): void {
    if (this.#stopped) return
    if (this.#stepping !== undefined) {
      this.#again = true
      return
    }
    this.#schedule(0)
  }

  async stop(): Promise<void> {
    this.#stopped = true
    clearTimeout(this.#timer)
    await this.#stepping
  }

  #schedule(ms: number): void {
    clearTimeout(this.#timer)
    this.#timer = setTimeout(() => {
      this.#stepping = this.#step().finally(() => {
        this.#stepping = undefined
      })
    }, ms)
    // Replays never keep the process up by themselves.
    this.#timer.unref()
  }

  async #step(): Promise<void> {
    let wait = REPLAY_POLL_MS
    try {
      const step = await this.#replays.queue()
      this.#failedMs = 0
      if (step.queued > 0) this.#queued()
      if (step.nextIn !== undefined) wait = Math.min(REPLAY_POLL_MS, Math.max(0, step.nextIn))
    } catch (error) {
      this.#failedMs = nextBackoff(this.#failedMs)
      wait = this.#failedMs
      log.error(`could not queue replay deliveries: ${(error as Error).message}; trying again in ${wait} ms`, {
        event: 'replay-queue-failed',
      })
    }
    if (this.#stopped) return
    // The worker also looks again each poll: deliveries another relay queued, or left behind.
    if (wait === REPLAY_POLL_MS) this.#queued()
    this.#schedule(this.#again ? 0 : wait)
    this.#again = false
  }
}
