import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Counter, Histogram, Registry } from 'prom-client'
import { MESSAGE_TYPES } from '../../shared/message'
import { LIBRARY_VERSION } from '../../shared/version'
import { promClient } from './prom-client'

// Issue 20's metrics (the operator's console), kept apart from metrics.ts so that other additions
// there merge cleanly: how long ingest requests take, what receivers answer, and which build runs.

/** The class of a receiver's answer, as the `status_class` label says it; `error` when none came. */
export type StatusClassLabel = '2xx' | '3xx' | '4xx' | '5xx' | 'error'

const STATUS_CLASSES: readonly StatusClassLabel[] = ['2xx', '3xx', '4xx', '5xx', 'error']

// The upper bounds of the ingest duration buckets, seconds: from a group commit on a local disk
// to a request held up by a slow store.
const INGEST_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10]

// The paths whose requests are ingest requests (docs/ingest.md, "Endpoints").
const INGEST_PATH = new RegExp(`^/v1/(?:batch|${MESSAGE_TYPES.join('|')})$`)

/** The console's series, registered in a relay's own registry by {@link RelayMetrics}. */
export class ConsoleMetrics {
  readonly #ingestDuration: Histogram<'status'>
  /** Webhook requests by the answer's class; fed by the attempt tally of {@link RelayMetrics}. */
  readonly requests: Counter<'source' | 'destination' | 'status_class'>

  constructor(registers: Registry[], routes: readonly { source: string; destination: string }[]) {
    const { Counter, Gauge, Histogram } = promClient()
    this.#ingestDuration = new Histogram({
      name: 'tracklet_ingest_request_duration_seconds',
      help: 'How long the relay took to answer an ingest request (POST /v1/batch, /v1/track, ...), by the HTTP status it answered, seconds.',
      labelNames: ['status'],
      buckets: INGEST_BUCKETS,
      registers,
    })
    this.requests = new Counter({
      name: 'tracklet_webhook_requests_total',
      help: "Webhook requests of delivery attempts, by the receiver's answer: 2xx, 3xx, 4xx, 5xx, or error (no answer: a timeout, a refused connection).",
      labelNames: ['source', 'destination', 'status_class'],
      registers,
    })
    const buildInfo = new Gauge({
      name: 'tracklet_build_info',
      help: 'Always 1; its version label is the version of Tracklet this relay runs.',
      labelNames: ['version'],
      registers,
    })
    buildInfo.set({ version: LIBRARY_VERSION }, 1)
    this.startSeries(routes)
  }

  /**
   * Every series `routes` will have starts at 0, so rate() sees its first increase (at start, and
   * for a route added while the relay runs). A series already counting keeps its count.
   */
  startSeries(routes: readonly { source: string; destination: string }[]): void {
    for (const route of routes) {
      for (const status_class of STATUS_CLASSES) this.requests.inc({ ...route, status_class }, 0)
    }
  }

  /**
   * `listener`, timing each ingest request from its arrival to the end of its answer, by the
   * status answered. A request whose client went away before the answer is not counted.
   */
  timeIngest(
    listener: (req: IncomingMessage, res: ServerResponse) => void,
    now: () => number = () => performance.now(),
  ): (req: IncomingMessage, res: ServerResponse) => void {
    return (req, res) => {
      if (req.method === 'POST' && INGEST_PATH.test((req.url ?? '').split('?')[0]!)) {
        const started = now()
        res.once('finish', () => {
          this.#ingestDuration.observe({ status: String(res.statusCode) }, Math.max(0, now() - started) / 1000)
        })
      }
      listener(req, res)
    }
  }
}

/** The class of an HTTP status (`503` → `5xx`); `error` when there was no answer. */
export function statusClass(status: number | undefined): StatusClassLabel {
  if (status === undefined || status < 200 || status > 599) return 'error'
  return `${Math.floor(status / 100)}xx` as StatusClassLabel
}
