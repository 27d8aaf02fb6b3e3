import { redactUrl } from '../../shared/redact-url'
import { log } from '../log'
import { validRetryAfter } from '../../shared/retry'
import type { DestinationRequest } from './destination'
import { describeRequest } from './failure-text'
import { nextBackoff } from './timing'

/** Failed and answered requests to one URL not yet written to the store. */
export interface Unreported {
  failures: number
  /** A request was answered since the last report: the run of failures is broken. */
  answered: boolean
  /** Why the last one failed. */
  error: string
  /** The longest `Retry-After` among the failures, ms. */
  retryAfterMs: number | undefined
}

// Results are written to the store together, at most this often.
const REPORT_INTERVAL_MS = 5

/**
 * Requests' verdicts on their URLs, queued and written to the store together (by `write`, one URL
 * at a time). A write that fails is kept, merged with what came since, and tried again after a
 * back-off.
 */
export class Reports {
  readonly #write: (url: string, unreported: Unreported) => Promise<void>
  readonly #settled: () => void
  #unreported = new Map<string, Unreported>()
  #timer: NodeJS.Timeout | undefined
  #writing: Promise<void> | undefined
  /** The wait before writing again after a failed write, ms; 0 while writes succeed. */
  #retryMs = 0
  #stopped = false

  constructor(write: (url: string, unreported: Unreported) => Promise<void>, settled: () => void) {
    this.#write = write
    this.#settled = settled
  }

  /** Something is queued or being written. */
  get busy(): boolean {
    return this.#unreported.size > 0 || this.#writing !== undefined
  }

  /** What came for `url` since the write under way began. */
  pending(url: string): Unreported | undefined {
    return this.#unreported.get(url)
  }

  /** Queues a request's verdict; `urgent` writes it at once (a circuit about to open). */
  add(url: string, verdict: 'up' | 'down', request: DestinationRequest, urgent: boolean): void {
    const unreported = this.#unreported.get(url) ?? { failures: 0, answered: false, error: '', retryAfterMs: undefined }
    if (verdict === 'up') {
      unreported.answered = true
      unreported.failures = 0
    } else {
      unreported.failures++
      unreported.error = describeRequest(request)
      const retryAfter = validRetryAfter(request.retryAfterMs)
      if (retryAfter !== undefined) unreported.retryAfterMs = Math.max(unreported.retryAfterMs ?? 0, retryAfter)
    }
    this.#unreported.set(url, unreported)
    if (this.#stopped) return
    if (urgent && this.#retryMs === 0) {
      clearTimeout(this.#timer)
      this.#timer = setTimeout(() => void this.flush(), 0)
    } else {
      this.#timer ??= setTimeout(() => void this.flush(), REPORT_INTERVAL_MS)
    }
  }

  /** Writes what is queued (after a write under way, if any). */
  async flush(): Promise<void> {
    clearTimeout(this.#timer)
    this.#timer = undefined
    if (this.#writing !== undefined || this.#unreported.size === 0) return
    const batch = this.#unreported
    this.#unreported = new Map()
    this.#writing = this.#writeAll(batch)
    await this.#writing
    this.#writing = undefined
    if (this.#unreported.size > 0 && !this.#stopped) {
      this.#timer ??= setTimeout(() => void this.flush(), this.#retryMs || REPORT_INTERVAL_MS)
    }
    this.#settled()
  }

  /** Writes what is queued, then stops its timer. */
  async stop(): Promise<void> {
    this.#stopped = true
    clearTimeout(this.#timer)
    await this.#writing
    await this.flush()
    clearTimeout(this.#timer)
  }

  async #writeAll(batch: Map<string, Unreported>): Promise<void> {
    for (const [url, unreported] of batch) {
      try {
        await this.#write(url, unreported)
        batch.delete(url)
      } catch (error) {
        this.#retryMs = nextBackoff(this.#retryMs)
        log.error(
          `could not record the circuit of ${redactUrl(url)}: ${(error as Error).message}; writing again in ${this.#retryMs} ms`,
          { event: 'circuit-record-failed', url },
        )
        break
      }
    }
    if (batch.size === 0) this.#retryMs = 0
    for (const [url, unreported] of batch) this.#unreported.set(url, merge(unreported, this.#unreported.get(url)))
  }
}

// What could not be written, and what came since: an answer since wins (the run is broken anyway).
function merge(older: Unreported, newer: Unreported | undefined): Unreported {
  if (newer === undefined) return older
  if (newer.answered) return newer
  return {
    failures: older.failures + newer.failures,
    answered: older.answered,
    error: newer.error || older.error,
    retryAfterMs:
      older.retryAfterMs === undefined && newer.retryAfterMs === undefined
        ? undefined
        : Math.max(older.retryAfterMs ?? 0, newer.retryAfterMs ?? 0),
  }
}
