// Events are counted in buckets this long; the oldest bucket falls out of the window whole.
const BUCKET_MS = 10_000

/**
 * Counts of recent events by kind, for "per minute over the last few minutes" at a glance on the
 * operator page (Prometheus keeps the real history). Memory is a bucket per 10 seconds of the window.
 */
export class EventRates<Kind extends string> {
  readonly #windowMs: number
  readonly #now: () => number
  readonly #startedAt: number
  /** Buckets by start time (epoch ms, a multiple of the bucket length), oldest first. */
  #buckets: { start: number; counts: Map<Kind, number> }[] = []

  constructor(windowMs: number, now: () => number = Date.now) {
    this.#windowMs = windowMs
    this.#now = now
    this.#startedAt = now()
  }

  /** `count` events of `kind` happened now. */
  add(kind: Kind, count = 1): void {
    if (count <= 0) return
    const start = Math.floor(this.#now() / BUCKET_MS) * BUCKET_MS
    let last = this.#buckets.at(-1)
    if (last === undefined || last.start !== start) {
      last = { start, counts: new Map() }
      this.#buckets.push(last)
      this.#drop()
    }
    last.counts.set(kind, (last.counts.get(kind) ?? 0) + count)
  }

  /** Events of `kind` per minute over the window (or since the start, when that is shorter). */
  perMinute(kind: Kind): number {
    this.#drop()
    let total = 0
    for (const bucket of this.#buckets) total += bucket.counts.get(kind) ?? 0
    const span = Math.min(this.#windowMs, Math.max(BUCKET_MS, this.#now() - this.#startedAt))
    return (total * 60_000) / span
  }

  #drop(): void {
    const oldest = this.#now() - this.#windowMs
    while (this.#buckets.length > 0 && this.#buckets[0]!.start + BUCKET_MS <= oldest) this.#buckets.shift()
  }
}
