import type { HealthReport, WriteKind } from '../events/readings'
import { log } from '../log'
import { redactUrlsInText } from '../redact'
import { NO_PRIMARY_MESSAGE } from '../kit/postgres/primary-finder'

/**
 * {@link HealthReport} without the errors (`the store refuses writes of outcomes`), for whoever
 * asks without the admin token: an error can name the database's host, a path or a user.
 */
export function withoutErrors(report: HealthReport): HealthWithoutErrors {
  // A source's name is no secret; why it cannot be read is the admin's to see.
  const unreadable = report.unreadableSources?.map(({ name }) => ({ name }))
  const sources = unreadable === undefined ? {} : { unreadableSources: unreadable }
  if (report.ok) return { ok: true, ...sources }
  return {
    ok: false,
    reason: refusalOf(report.failing),
    failing: report.failing.map(({ writes, since }) => ({ writes, since })),
    ...sources,
  }
}

/** {@link HealthReport} as {@link withoutErrors} makes it. */
export type HealthWithoutErrors = (
  | { ok: true }
  | { ok: false; reason: string; failing: { writes: WriteKind; since: string }[] }
) & { unreadableSources?: { name: string }[] }

function refusalOf(failing: readonly { writes: WriteKind; error?: string }[]): string {
  const refusal = `the store refuses writes of ${failing.map((f) => f.writes).join(', ')}`
  // During a failover: said without the token too (it names no host).
  const noPrimary = failing.some((f) => f.error?.includes(NO_PRIMARY_MESSAGE))
  return noPrimary ? `${NO_PRIMARY_MESSAGE}: ${refusal}` : refusal
}

// Kinds the relay writes again by itself (the worker retries outcomes and claims with a back-off,
// the sweeper runs on a timer): their own next success is the truth. The others (new deliveries)
// come from clients, and a load balancer that saw a 503 sends none: a probe write stands in.
const RETRIED_BY_THE_RELAY: ReadonlySet<WriteKind> = new Set(['outcomes', 'claims', 'retention'])

// While a write that only clients make is failing, probe this often: soon at first, then less.
const PROBE_MIN_MS = 250
const PROBE_MAX_MS = 10_000

// An error shown on /healthz (which needs no token) is cut to this length, its URLs redacted.
const MAX_ERROR_CHARS = 300

/** What {@link StoreHealth} needs. */
export interface StoreHealthOptions {
  /**
   * A write through the store that touches nothing a user sees, of at least `bytes` (the largest
   * write of new deliveries that failed); resolves once committed. Run while writes of new
   * deliveries are failing, to learn when they work again without traffic: never smaller than
   * the write that failed, or it could fit where ingest's does not (a nearly full disk).
   */
  probe: (bytes: number) => Promise<void>
  now?: () => number
  /** The API sources the relay cannot read now, reported with the store's health. */
  unreadableSources?: () => readonly { name: string; error: string }[]
}

/**
 * Whether the store takes writes, as learned from the writes themselves: a kind of write that
 * failed is unhealthy until one of the same kind succeeds (or, for new deliveries, until a probe
 * write does). Each change is logged once.
 */
export class StoreHealth {
  readonly #probe: (bytes: number) => Promise<void>
  /** The largest failed write of new deliveries since they started failing, bytes: the probe's size. */
  #failedBytes = 0
  readonly #now: () => number
  /** Each kind of write failing now: its last error and when it started failing (epoch ms). */
  readonly #failing = new Map<WriteKind, { error: string; since: number }>()
  /** The timer of the next probe write, while one is wanted. */
  #probeTimer: NodeJS.Timeout | undefined
  /** The wait before the next probe, ms: doubles while probes fail. */
  #probeDelay = PROBE_MIN_MS
  #stopped = false
  readonly #unreadableSources: () => readonly { name: string; error: string }[]

  constructor(options: StoreHealthOptions) {
    this.#probe = options.probe
    this.#now = options.now ?? Date.now
    this.#unreadableSources = options.unreadableSources ?? (() => [])
  }

  /** A write of `kind` was committed. */
  succeeded(kind: WriteKind): void {
    if (!this.#failing.delete(kind)) return
    if (kind === 'deliveries') this.#failedBytes = 0
    log.info(`store health: writes of ${kind} succeed again`, { event: 'store-writes-recovered', writes: kind })
    this.#afterChange()
  }

  /** A write of `kind`, of `bytes` when known, failed with `error`. */
  failed(kind: WriteKind, error: unknown, bytes = 0): void {
    if (kind === 'deliveries') this.#failedBytes = Math.max(this.#failedBytes, bytes)
    const text = describeError(error)
    const current = this.#failing.get(kind)
    if (current !== undefined) {
      current.error = text
      return
    }
    this.#failing.set(kind, { error: text, since: this.#now() })
    log.error(`store health: writes of ${kind} fail (${text}); /healthz answers 503`, {
      event: 'store-writes-failing',
      writes: kind,
    })
    this.#afterChange()
  }

  /** The current answer of `/healthz`. */
  report(): HealthReport {
    const unreadable = this.#unreadableSources()
    const sources = unreadable.length === 0 ? {} : { unreadableSources: unreadable.map((u) => ({ ...u })) }
    return { ...this.#storeReport(), ...sources }
  }

  #storeReport(): HealthReport {
    if (this.#failing.size === 0) return { ok: true }
    const failing = [...this.#failing].map(([writes, { error, since }]) => ({
      writes,
      error,
      since: new Date(since).toISOString(),
    }))
    const first = failing[0]!
    return {
      ok: false,
      reason: `${refusalOf(failing)}: ${first.error}`,
      failing,
    }
  }

  /** Stops probing (the relay is closing). */
  stop(): void {
    this.#stopped = true
    clearTimeout(this.#probeTimer)
    this.#probeTimer = undefined
  }

  #afterChange(): void {
    if (this.#failing.size === 0)
      log.info('store health: every write succeeds; /healthz answers 200', { event: 'healthy' })
    const wanted = [...this.#failing.keys()].some((kind) => !RETRIED_BY_THE_RELAY.has(kind))
    if (!wanted) {
      clearTimeout(this.#probeTimer)
      this.#probeTimer = undefined
      this.#probeDelay = PROBE_MIN_MS
    } else if (this.#probeTimer === undefined) {
      this.#scheduleProbe()
    }
  }

  #scheduleProbe(): void {
    if (this.#stopped) return
    this.#probeTimer = setTimeout(() => void this.#runProbe(), this.#probeDelay)
    // A relay that is only waiting for its store to heal must still be able to exit.
    this.#probeTimer.unref()
  }

  async #runProbe(): Promise<void> {
    try {
      await this.#probe(this.#failedBytes)
    } catch (error) {
      if (this.#stopped) return
      for (const [kind, state] of this.#failing) if (!RETRIED_BY_THE_RELAY.has(kind)) state.error = describeError(error)
      this.#probeDelay = Math.min(PROBE_MAX_MS, this.#probeDelay * 2)
      this.#scheduleProbe()
      return
    }
    this.#probeTimer = undefined
    this.#probeDelay = PROBE_MIN_MS
    // The probe speaks only for writes nothing else retries; outcomes and claims prove themselves.
    for (const kind of [...this.#failing.keys()]) if (!RETRIED_BY_THE_RELAY.has(kind)) this.succeeded(kind)
  }
}

function describeError(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error)
  const redacted = redactUrlsInText(text.replace(/\s+/g, ' ').trim())
  return redacted.length > MAX_ERROR_CHARS ? `${redacted.slice(0, MAX_ERROR_CHARS - 1)}…` : redacted
}
