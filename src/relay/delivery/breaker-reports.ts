import { redactUrl } from '../../shared/redact-url'
import { validRetryAfter } from '../../shared/retry'
import type { DeliveryAttempt } from '../../webhooks/index'
import { log } from '../log'
import { BatchedWriter, eachInTurn } from './batched-writer'
import { describeRequest } from '../destinations/failure-text'

/** Failed and answered requests to one URL not yet written to the store. */
export interface Unreported {
  failures: number
  /** A request was answered since the last report: the run of failures is broken. */
  answered: boolean
  /** Why the last one failed. */
  error: string
  /** The longest `Retry-After` among the failures, ms. */
  retryAfterMs: number | undefined
  /** The HTTP status of the last failure, when the receiver answered. */
  status?: number | undefined
  /** The HTTP status of the last answer (alerts: a 4xx closes a circuit, only a 2xx recovers). */
  answeredStatus?: number | undefined
}

/**
 * Requests' verdicts on their URLs, queued and written to the store together (by `write`, one URL
 * at a time) through a {@link BatchedWriter}: a write that fails is kept, merged with what came
 * since, and tried again after a back-off.
 */
export class Reports {
  readonly #writer: BatchedWriter<string, Unreported>

  constructor(write: (url: string, unreported: Unreported) => Promise<void>, settled: () => void) {
    this.#writer = new BatchedWriter({
      write: eachInTurn(write),
      merge,
      failed: (error, left, retryMs) => {
        const url = left.keys().next().value ?? ''
        log.error(
          `could not record the circuit of ${redactUrl(url)}: ${error.message}; writing again in ${retryMs} ms`,
          { event: 'circuit-record-failed', url },
        )
      },
      settled,
    })
  }

  /** Something is queued or being written. */
  get busy(): boolean {
    return this.#writer.busy
  }

  /** What came for `url` since the write under way began. */
  pending(url: string): Unreported | undefined {
    return this.#writer.queued(url)
  }

  /** Queues a request's verdict; `urgent` writes it at once (a circuit about to open). */
  add(url: string, verdict: 'up' | 'down', request: DeliveryAttempt, urgent: boolean): void {
    this.#writer.add(url, (queued) => count(queued, verdict, request), urgent)
  }

  /** Writes what is queued (after a write under way, if any). */
  flush(): Promise<void> {
    return this.#writer.flush()
  }

  /** Writes what is queued, then stops its timer. */
  stop(): Promise<void> {
    return this.#writer.stop()
  }
}

// One more verdict on a URL: an answer breaks the run of failures; a failure adds to it.
function count(queued: Unreported | undefined, verdict: 'up' | 'down', request: DeliveryAttempt): Unreported {
  const unreported = queued ?? { failures: 0, answered: false, error: '', retryAfterMs: undefined }
  const answeredStatus = request.status
  if (verdict === 'up') return { ...unreported, answered: true, failures: 0, answeredStatus }
  const retryAfter = validRetryAfter(request.retryAfterMs)
  return {
    ...unreported,
    failures: unreported.failures + 1,
    error: describeRequest(request),
    status: request.status,
    retryAfterMs:
      retryAfter === undefined ? unreported.retryAfterMs : Math.max(unreported.retryAfterMs ?? 0, retryAfter),
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
    status: newer.error ? newer.status : older.status,
    answeredStatus: older.answeredStatus,
    retryAfterMs:
      older.retryAfterMs === undefined && newer.retryAfterMs === undefined
        ? undefined
        : Math.max(older.retryAfterMs ?? 0, newer.retryAfterMs ?? 0),
  }
}
