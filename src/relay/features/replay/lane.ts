import { log } from '../../log'
import type { QueueStep, ReplayDue } from '../../store/replays'
import type { ClaimRequest, Store } from '../../store/store'
import { type DestinationSender, ONE_AT_A_TIME } from '../../destinations/destination'
import { WEBHOOK_RETRIES } from '../../destinations/webhooks/index'
import type { DeliveryStep } from '../../delivery/delivery-step'
import { nextBackoff } from '../../delivery/timing'
import { Worker, type WorkerOptions } from '../../delivery/worker'
import type { WorkerStore } from '../../delivery/worker-options'

// How often a relay looks for replay work it was not told of: a replay started through another
// relay, deliveries of a relay that died once their leases run out, a replay resumed elsewhere.
const REPLAY_POLL_MS = 1000

/** What a replay lane needs: the live worker's settings, and the outbox it shares. */
export interface ReplayLaneOptions
  extends Pick<
    WorkerOptions,
    'destinations' | 'retries' | 'concurrency' | 'leaseTimeout' | 'step' | 'limits' | 'observe'
  > {
  store: Pick<Store, 'replays' | 'renew' | 'release' | 'record'>
  /**
   * A sender of the source's Webhooks to a URL none of its settings lists (`to: { url }`), signed
   * as the source's are; without it, such a copy fails saying so.
   */
  sendTo?: (source: string, url: string) => DestinationSender | undefined
  /** A queueing step for replays the store cannot make alone (from the archive). */
  queue?: () => Promise<QueueStep>
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
  const targets = new ReplayTargets(options.destinations, options.sendTo)
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
    // A copy's target key names its destination first: the observers see the destination.
    ...(options.observe === undefined
      ? {}
      : { observe: (attempt) => options.observe?.({ ...attempt, destination: attempt.destination.split(' ')[0]! }) }),
  })
  const queue = options.queue ?? (() => store.replays.queue())
  const queuer = new ReplayQueuer(queue, () => worker.wake())
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
      await targets.close()
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
  readonly #sendTo: ReplayLaneOptions['sendTo']
  // The senders made for URLs no source lists: closed when the sources change, and at the end.
  #own: DestinationSender[] = []

  constructor(live: WorkerOptions['destinations'], sendTo: ReplayLaneOptions['sendTo']) {
    this.#live = live
    this.#sendTo = sendTo
    this.refresh()
  }

  async close(): Promise<void> {
    const own = this.#own
    this.#own = []
    await Promise.all(own.map((sender) => sender.close()))
  }

  /**
   * Reads the live destinations again (a source added, changed or removed while the relay runs),
   * in place: the worker holds these maps. The one-URL keys are made again at their next claim,
   * from the settings of that moment.
   */
  refresh(): void {
    void this.close()
    this.destinations.clear()
    for (const source of this.#live.keys()) {
      this.destinations.set(source, new Map(this.#live.get(source)))
    }
  }

  #ownSender(source: string, url: string): DestinationSender | undefined {
    const sender = this.#sendTo?.(source, url)
    if (sender !== undefined) this.#own.push(sender)
    return sender
  }

  /** The claimed deliveries, each with the key of its target as its destination. */
  route(claimed: readonly ReplayDue[]): ReplayDue[] {
    return claimed.map((delivery) => {
      if (delivery.url === undefined) return delivery
      const key = `${delivery.destination} ${delivery.url}`
      const live = this.#live.get(delivery.source)?.get(delivery.destination)
      const byKey = this.destinations.get(delivery.source)
      // A source with no Webhooks (an archive's alone) sends its copies to `to.url` all the same.
      if (byKey !== undefined && !byKey.has(key)) {
        byKey.set(
          key,
          toOneUrl(live, delivery.url, () => this.#ownSender(delivery.source, delivery.url!)),
        )
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

// `destination`, sending to `url` alone: one of its URLs, or (`to: { url }` of a URL it does not
// list) a sender of its own, signed as the source's are. Without one, the attempt says why.
function toOneUrl(
  destination: DestinationSender | undefined,
  url: string,
  own: () => DestinationSender | undefined,
): DestinationSender {
  let made: DestinationSender | undefined
  return {
    targets: [url],
    // A replay's copies count against the URL's limits as live deliveries do.
    ...(destination?.limits === undefined ? {} : { limits: destination.limits }),
    batching: destination?.batching ?? ONE_AT_A_TIME,
    retries: destination?.retries ?? WEBHOOK_RETRIES,
    sendBatch: async (batch) => {
      if (destination?.targets.includes(url)) return destination.sendBatch(batch, { targets: [url] })
      made ??= own()
      if (made === undefined) {
        const error = `the destination threw: ${url} is not one of the destination's URLs and cannot be sent to alone`
        return batch.map(() => ({ kind: 'failed', retryable: false, error }))
      }
      return made.sendBatch(batch)
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
  readonly #queue: () => Promise<QueueStep>
  readonly #queued: () => void
  #timer: NodeJS.Timeout | undefined
  #stepping: Promise<void> | undefined
  #again = false
  #failedMs = 0
  #stopped = false

  constructor(queue: () => Promise<QueueStep>, queued: () => void) {
    this.#queue = queue
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
      const step = await this.#queue()
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
