import type { AlertEvent } from '../../../config/alerts-option'

/** The JSON body of one alert POSTed to `alerts.url` (docs/operations.md, "Alerts"). */
export interface AlertNotice {
  event: AlertEvent
  /** When it happened, ISO 8601 UTC. */
  at: string
  /** The webhook URL concerned (origin and path: never its query). */
  url?: string
  source?: string
  /** `delivery.failed`: dead letters of this endpoint since its last notice. */
  count?: number
  /** The last error the endpoint gave. */
  error?: string
  /**
   * The HTTP status of the request the alert is about (the failure that opened the circuit, the
   * 2xx that recovered it, the last dead letter's), when the receiver answered.
   */
  status?: number
}

/** At most one `delivery.failed` per endpoint this often, ms; the dead letters between are counted. */
export const DELIVERY_FAILED_INTERVAL_MS = 60_000

/**
 * A `delivery.failed` notice this relay claimed waits until its endpoint has dead-lettered nothing
 * more for this long, ms, counting what comes meanwhile: a backlog dead-lettered together is one
 * notice with its whole count, not 1 then the rest a minute later.
 */
export const DELIVERY_FAILED_GATHER_MS = 1000

/** …and never longer than this after its claim, ms (a steady trickle of dead letters). */
export const DELIVERY_FAILED_GATHER_MAX_MS = 10_000
