import { LAST_HOUR_MINUTES, type LastHour, type MinuteReading } from '../events/readings'
import type { RelayEvent } from '../events/kinds'

const MINUTE_MS = 60_000
// Attempt times are counted per minute in buckets growing by this factor from 1 ms (to about
// 80 s in 50 buckets): a percentile is read as its bucket's upper bound, within 20 %.
const BUCKET_GROWTH = 1.25
const BUCKETS = 50

interface Minute {
  at: number
  ingested: number
  delivered: number
  deadLettered: number
  /** Attempts by time bucket; allocated at the minute's first attempt. */
  times: Uint32Array | undefined
  attempts: number
}

/**
 * One minute's counts as a process reports them (plain JSON, for the primary of `--workers`): the
 * attempt times by bucket, so that the p99 of several processes' minutes is read from their sum.
 */
export interface MinuteCounts {
  at: number
  ingested: number
  delivered: number
  deadLettered: number
  /** Attempts by time bucket; absent for a minute with no attempt. */
  times?: number[]
}

/**
 * The relay's last hour, minute by minute, kept in memory for the overview's charts (Prometheus
 * keeps the real history): what ingest and delivery tell the events channel, counted. Memory is
 * 60 small records; nothing is done for a minute nothing happens in.
 */
export class MinuteHistory {
  readonly #now: () => number
  /** Minutes with something in them, oldest first, none older than the hour. */
  #minutes: Minute[] = []

  constructor(now: () => number = Date.now) {
    this.#now = now
  }

  /** Counts `event`, if it is one the charts show. */
  count(event: RelayEvent): void {
    if (event.type === 'ingested') {
      if (event.outcome.accepted > 0) this.#current().ingested += event.outcome.accepted
    } else if (event.type === 'attempt' && event.attempt.replayId === undefined) {
      const minute = this.#current()
      const { next } = event.attempt.outcome
      if (next.status === 'delivered') minute.delivered++
      else if (next.status === 'failed') minute.deadLettered++
      minute.times ??= new Uint32Array(BUCKETS)
      minute.times[bucketOf(event.attempt.ms)]!++
      minute.attempts++
    }
  }

  /** The last hour, a reading for every minute (zeros for the quiet ones), oldest first. */
  lastHour(): LastHour {
    return lastHourOf(this.counts(), this.#now())
  }

  /** This process's minutes with something in them, within the hour: what a worker reports. */
  counts(): MinuteCounts[] {
    this.#drop(minuteOf(this.#now()))
    return this.#minutes.map(({ at, ingested, delivered, deadLettered, times }) => ({
      at,
      ingested,
      delivered,
      deadLettered,
      ...(times === undefined ? {} : { times: [...times] }),
    }))
  }

  #current(): Minute {
    const at = minuteOf(this.#now())
    const last = this.#minutes.at(-1)
    if (last !== undefined && last.at === at) return last
    this.#drop(at)
    const minute = emptyMinute(at)
    this.#minutes.push(minute)
    return minute
  }

  #drop(current: number): void {
    const oldest = current - (LAST_HOUR_MINUTES - 1) * MINUTE_MS
    while (this.#minutes.length > 0 && this.#minutes[0]!.at < oldest) this.#minutes.shift()
  }
}

/**
 * The hour ending at `now`, a reading for every minute, from the counts of one process or of
 * several (`--workers`: every worker's, added up minute by minute, their p99 read from the summed
 * buckets).
 */
export function lastHourOf(counts: readonly MinuteCounts[], now: number): LastHour {
  const current = minuteOf(now)
  const byStart = new Map<number, Minute>()
  for (const part of counts) {
    const minute = byStart.get(part.at) ?? emptyMinute(part.at)
    byStart.set(part.at, minute)
    minute.ingested += part.ingested
    minute.delivered += part.delivered
    minute.deadLettered += part.deadLettered
    if (part.times === undefined) continue
    minute.times ??= new Uint32Array(BUCKETS)
    part.times.forEach((n, i) => {
      if (i < BUCKETS) minute.times![i]! += n
    })
    minute.attempts += part.times.reduce((sum, n) => sum + n, 0)
  }
  const readings: MinuteReading[] = []
  for (let i = LAST_HOUR_MINUTES - 1; i >= 0; i--) {
    const at = current - i * MINUTE_MS
    const minute = byStart.get(at)
    readings.push({
      at,
      ingested: minute?.ingested ?? 0,
      delivered: minute?.delivered ?? 0,
      deadLettered: minute?.deadLettered ?? 0,
      p99Ms: minute === undefined ? undefined : percentile(minute, 0.99),
    })
  }
  return readings
}

function emptyMinute(at: number): Minute {
  return { at, ingested: 0, delivered: 0, deadLettered: 0, times: undefined, attempts: 0 }
}

function minuteOf(ms: number): number {
  return Math.floor(ms / MINUTE_MS) * MINUTE_MS
}

function bucketOf(ms: number): number {
  if (ms <= 1) return 0
  return Math.min(BUCKETS - 1, Math.ceil(Math.log(ms) / Math.log(BUCKET_GROWTH)))
}

// The upper bound of the bucket the `q` quantile of the minute's attempts falls in, ms.
function percentile(minute: Minute, q: number): number | undefined {
  if (minute.times === undefined || minute.attempts === 0) return undefined
  const rank = Math.ceil(q * minute.attempts)
  let seen = 0
  for (let i = 0; i < BUCKETS; i++) {
    seen += minute.times[i]!
    if (seen >= rank) return Math.round(BUCKET_GROWTH ** i)
  }
  return Math.round(BUCKET_GROWTH ** (BUCKETS - 1))
}
