import type { AlertEvent } from '../../config/alerts-option'

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
}

/** At most one `delivery.failed` per endpoint this often, ms; the dead letters between are counted. */
export const DELIVERY_FAILED_INTERVAL_MS = 60_000
