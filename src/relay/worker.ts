import PQueue from 'p-queue'
import type { Destination, DestinationResult, RetrySchedule } from './destination'
import { log } from './log'
import { redactUrl } from '../shared/redact-url'
import { BLOCKED_ADDRESS_CODE } from './ssrf'
import type { AttemptOutcome, DueDelivery, Outbox } from './outbox'

/** What the worker needs: the outbox, each source's destinations by name, and the retry rule. */
export interface WorkerOptions {
  outbox: Outbox
  /** Source name → destination name → destination. */
  destinations: ReadonlyMap<string, ReadonlyMap<string, Destination>>
  schedule: RetrySchedule
  /** Deliveries in flight at once, per source. */
  concurrency: number
  now?: () => number
}

// Each source has its own lane (queue, timer), so a slow receiver fills only its own lane's slots
// and the other sources' deliveries keep flowing.
interface Lane {
  source: string
  queue: PQueue
  /** Attempts running now: at most `concurrency`. */
  running: number
  /** Due deliveries read ahead, waiting for a free slot (read in chunks, not one query per slot). */
  buffer: DueDelivery[]
  /** Ids taken and not yet recorded (buffered, running, or their outcome waiting to be written). */
  taken: Set<number>
  /** Wakes the lane when its next retry is due. */
  timer: NodeJS.Timeout | undefined
  pumpScheduled: boolean
}

// Due deliveries are read at least this many at a time: one query feeds many attempts.
const READ_AHEAD = 64

// Outcomes are written together, at most this often: one transaction for many attempts. Losing
// the unwritten ones in a crash only means those messages are sent again (at-least-once).
const RECORD_INTERVAL_MS = 5

// After a failed write of outcomes (a full disk, a busy database), the write is tried again after
// this long, doubling up to the maximum. Meanwhile the deliveries stay taken and no new attempt
// starts: sending again what could not be recorded would only repeat it, without end.
const RECORD_RETRY_MIN_MS = 50
const RECORD_RETRY_MAX_MS = 30_000

/**
 * Takes due deliveries from the outbox and attempts them, bounded per source; records each
 * attempt and schedules the next by the retry rule, or dead-letters. Woken when new deliveries are
 * committed and by a timer for the next due retry, never by busy polling.
 *
 * What it has taken is kept in memory only: a delivery stays `pending` in the outbox until its
 * outcome is written, so after a crash it is simply due again.
 */
export class Worker {
  readonly #outbox: Outbox
  readonly #destinations: WorkerOptions['destinations']
  readonly #schedule: RetrySchedule
  readonly #concurrency: number
  readonly #now: () => number
  /** Lanes by source name. */
  readonly #lanes = new Map<string, Lane>()
  /** Outcomes waiting to be written together in one transaction. */
  #outcomes: { lane: Lane; outcome: AttemptOutcome }[] = []
  /** The timer that writes `#outcomes`. */
  #recordTimer: NodeJS.Timeout | undefined
  /** The wait before the next write after the last one failed, ms; 0 while writes succeed. */
  #recordRetryMs = 0
  /** No new attempts start (closing). */
  #stopping = false
  /** Outcomes arriving now are dropped: their deliveries are still pending for the next start. */
  #closed = false
  /** Resolvers of `idle()`. */
  #idleWaiters: (() => void)[] = []

  constructor(options: WorkerOptions) {
    this.#outbox = options.outbox
    this.#destinations = options.destinations
    this.#schedule = options.schedule
    this.#concurrency = options.concurrency
    this.#now = options.now ?? Date.now
    for (const source of options.destinations.keys()) {
      this.#lanes.set(source, {
        source,
        queue: new PQueue({ concurrency: options.concurrency }),
        running: 0,
        buffer: [],
        taken: new Set(),
        timer: undefined,
        pumpScheduled: false,
      })
    }
  }

  /** New deliveries were committed (or retries became due): look for work on every lane. */
  wake(): void {
    for (const lane of this.#lanes.values()) this.#schedulePump(lane)
  }

  /** Resolves once nothing is scheduled, in flight or waiting to be written (for tests and shutdown). */
  idle(): Promise<void> {
    if (this.#isIdle()) return Promise.resolve()
    return new Promise((resolve) => this.#idleWaiters.push(resolve))
  }

  /**
   * Stops taking deliveries and waits up to `graceMs` for those in flight; their outcomes are
   * written. Deliveries still in flight after that stay pending, and are attempted again when the
   * relay next starts.
   */
  async stop(graceMs: number): Promise<void> {
    this.#stopping = true
    for (const lane of this.#lanes.values()) {
      clearTimeout(lane.timer)
      lane.buffer = [] // still pending in the outbox
    }
    let timer: NodeJS.Timeout | undefined
    await Promise.race([this.idle(), new Promise((resolve) => (timer = setTimeout(resolve, graceMs)))])
    clearTimeout(timer)
    this.#record()
    this.#closed = true
    // Outcomes that could not be written now are left: their deliveries are pending for the next start.
    clearTimeout(this.#recordTimer)
  }

  #schedulePump(lane: Lane): void {
    if (lane.pumpScheduled || this.#stopping) return
    lane.pumpScheduled = true
    setImmediate(() => {
      lane.pumpScheduled = false
      this.#pump(lane)
    })
  }

  #pump(lane: Lane): void {
    if (this.#stopping || this.#recordRetryMs > 0) return this.#checkIdle()
    clearTimeout(lane.timer)
    lane.timer = undefined
    if (lane.buffer.length < this.#concurrency) {
      const wanted = Math.max(READ_AHEAD, 2 * this.#concurrency) - lane.buffer.length
      // One instant for both questions: a delivery due at exactly `now` is either taken here or
      // timed, never missed between two readings of the clock.
      const now = this.#now()
      const due = this.#outbox.due(lane.source, wanted, lane.taken, now)
      for (const delivery of due) {
        lane.taken.add(delivery.id)
        lane.buffer.push(delivery)
      }
      if (due.length < wanted) this.#armTimer(lane, now)
    }
    while (lane.running < this.#concurrency && lane.buffer.length > 0) {
      const delivery = lane.buffer.shift()!
      lane.running++
      lane.queue
        .add(() => this.#attempt(lane, delivery))
        .catch((error: unknown) => this.#abandon(lane, delivery, error))
    }
    this.#checkIdle()
  }

  // Sleeps until the lane's next retry is due. Unref'd: a pending retry never keeps the process up.
  #armTimer(lane: Lane, now: number): void {
    const dueAt = this.#outbox.nextDueAt(lane.source, now)
    if (dueAt === undefined) return
    // setTimeout's limit is 2^31-1 ms; a later due time just wakes the lane early. A timer may
    // fire a millisecond early: the pump then finds nothing due and arms it again.
    const delay = Math.min(dueAt - now, 2 ** 31 - 1)
    lane.timer = setTimeout(() => this.#schedulePump(lane), delay)
    lane.timer.unref()
  }

  async #attempt(lane: Lane, delivery: DueDelivery): Promise<void> {
    const at = this.#now()
    const result = await this.#send(delivery, at)
    let outcome: AttemptOutcome
    try {
      outcome = this.#outcomeOf(delivery, at, result)
    } catch (error) {
      // A bug or a bad value while judging the attempt: dead-letter the delivery with the error
      // (it can be retried by hand) rather than leave it taken forever or crash the process.
      outcome = this.#crashed(delivery, at, error, result.attempts)
    }
    this.#settle(lane, outcome)
  }

  // The last resort of a queued attempt: nothing it throws may become an unhandled rejection.
  #abandon(lane: Lane, delivery: DueDelivery, error: unknown): void {
    this.#settle(lane, this.#crashed(delivery, this.#now(), error))
  }

  // Frees the attempt's slot and queues its outcome; the delivery stays taken until that is written.
  #settle(lane: Lane, outcome: AttemptOutcome): void {
    if (this.#closed) return
    lane.running--
    this.#outcomes.push({ lane, outcome })
    this.#recordTimer ??= setTimeout(() => this.#record(), RECORD_INTERVAL_MS)
    this.#schedulePump(lane)
  }

  #crashed(
    delivery: DueDelivery,
    at: number,
    error: unknown,
    requests: AttemptOutcome['requests'] = [],
  ): AttemptOutcome {
    const message = error instanceof Error ? error.message : String(error)
    log(
      'delivery %d of source %s dead-lettered: the worker failed on its outcome: %s',
      delivery.id,
      delivery.source,
      error instanceof Error ? (error.stack ?? message) : message,
    )
    return {
      id: delivery.id,
      at,
      requests,
      next: { status: 'failed', error: `the relay failed to handle the attempt: ${message}` },
    }
  }

  async #send(delivery: DueDelivery, at: number): Promise<DestinationResult> {
    const destination = this.#destinations.get(delivery.source)?.get(delivery.destination)
    if (destination === undefined) {
      return {
        ok: false,
        retryable: false,
        attempts: [{ url: '-', error: `the source no longer has the ${delivery.destination} destination`, ms: 0 }],
      }
    }
    try {
      return await destination.send(delivery.message)
    } catch (error) {
      // A destination reports delivery failures in its result; it throws only for a message it
      // can never send (one it cannot format), which retrying would not change.
      return {
        ok: false,
        retryable: false,
        attempts: [{ url: '-', error: `the destination threw: ${(error as Error).message}`, ms: this.#now() - at }],
      }
    }
  }

  #outcomeOf(delivery: DueDelivery, at: number, result: DestinationResult): AttemptOutcome {
    const base = { id: delivery.id, at, requests: result.attempts }
    if (result.ok) {
      log('delivery %d of source %s delivered', delivery.id, delivery.source)
      return { ...base, next: { status: 'delivered' } }
    }
    // The stored error (admin-only) keeps whole URLs; the log shows them without query strings.
    const error = describeFailure(result)
    const logged = describeFailure(result, redactUrl)
    if (result.retryAfterMs !== undefined && !isValidRetryAfter(result.retryAfterMs)) {
      log(
        'delivery %d of source %s: ignoring a Retry-After of %s ms (not a finite number ≥ 0)',
        delivery.id,
        delivery.source,
        result.retryAfterMs,
      )
    }
    if (result.retryable && !isBlocked(result)) {
      const nextAttemptAt = this.#schedule({
        attempt: delivery.attempts + 1,
        firstAttemptAt: delivery.firstAttemptAt ?? at,
        now: this.#now(),
        ...(isValidRetryAfter(result.retryAfterMs) ? { retryAfterMs: result.retryAfterMs } : {}),
      })
      if (nextAttemptAt !== undefined) {
        log(
          'delivery %d of source %s failed (%s); next attempt at %d',
          delivery.id,
          delivery.source,
          logged,
          nextAttemptAt,
        )
        return { ...base, next: { status: 'pending', nextAttemptAt, error } }
      }
      log('delivery %d of source %s dead-lettered: retry window spent (%s)', delivery.id, delivery.source, logged)
      return { ...base, next: { status: 'failed', error: `retry window spent; last error: ${error}` } }
    }
    log('delivery %d of source %s dead-lettered: not retryable (%s)', delivery.id, delivery.source, logged)
    return { ...base, next: { status: 'failed', error } }
  }

  #record(): void {
    clearTimeout(this.#recordTimer)
    this.#recordTimer = undefined
    const batch = this.#outcomes
    if (batch.length === 0 || this.#closed) return
    this.#outcomes = []
    try {
      this.#outbox.record(batch.map((b) => b.outcome))
    } catch (error) {
      // Keep the outcomes (their deliveries stay taken, so none is sent again) and write later.
      this.#outcomes = batch.concat(this.#outcomes)
      this.#recordRetryMs = Math.min(RECORD_RETRY_MAX_MS, Math.max(RECORD_RETRY_MIN_MS, 2 * this.#recordRetryMs))
      log(
        'ERROR could not record %d outcomes: %s; attempts paused, writing again in %d ms',
        batch.length,
        (error as Error).message,
        this.#recordRetryMs,
      )
      this.#recordTimer = setTimeout(() => this.#record(), this.#recordRetryMs)
      return
    }
    const recovered = this.#recordRetryMs > 0
    this.#recordRetryMs = 0
    for (const { lane, outcome } of batch) lane.taken.delete(outcome.id)
    if (recovered) {
      log('recorded %d outcomes after earlier failures; attempts resume', batch.length)
      this.wake()
    } else {
      // A recorded failure may be due again soon: let each lane re-arm its timer.
      for (const lane of new Set(batch.map((b) => b.lane))) this.#schedulePump(lane)
    }
    this.#checkIdle()
  }

  #isIdle(): boolean {
    if (this.#outcomes.length > 0) return false
    for (const lane of this.#lanes.values()) if (lane.running > 0 || lane.pumpScheduled) return false
    return true
  }

  #checkIdle(): void {
    if (this.#idleWaiters.length === 0 || !this.#isIdle()) return
    const waiters = this.#idleWaiters
    this.#idleWaiters = []
    for (const resolve of waiters) resolve()
  }
}

// A destination's Retry-After is honoured only when it is a real wait; anything else (NaN,
// Infinity, negative) would make the retry rule throw, so the rule's own backoff applies.
function isValidRetryAfter(ms: number | undefined): ms is number {
  return ms !== undefined && Number.isFinite(ms) && ms >= 0
}

// Every URL was refused by the SSRF guard: a configuration matter that retrying will not change,
// so it is dead-lettered at once (and can be retried by hand once the configuration is fixed).
function isBlocked(result: DestinationResult): boolean {
  return result.attempts.length > 0 && result.attempts.every((a) => a.code === BLOCKED_ADDRESS_CODE)
}

/**
 * One line saying why each request of a failed attempt failed: `URL: HTTP 503; URL: timeout`.
 * `showUrl` decides how each URL appears (whole by default).
 */
export function describeFailure(result: DestinationResult, showUrl: (url: string) => string = (url) => url): string {
  if (result.attempts.length === 0) return 'no request was made'
  return result.attempts
    .map((a) => `${showUrl(a.url)}: ${a.error ?? (a.status === undefined ? 'failed' : `HTTP ${a.status}`)}`)
    .join('; ')
}
