import type { DeliveryStatus, DeliveryView } from './store'

/** A `deliveries` row as both stores read it (times as epoch ms). */
export interface DeliveryRow {
  id: number
  source: string
  destination: string
  message_id: string
  type: string
  message: string
  status: DeliveryStatus
  attempts: number
  first_attempt_at: number | null
  next_attempt_at: number
  last_error: string | null
  created_at: number
  updated_at: number
}

/** An `attempts` row: one HTTP request of an attempt. */
export interface AttemptRow {
  delivery_id: number
  at: number
  url: string
  status: number | null
  error: string | null
  ms: number
}

/** Delivery rows with their attempt rows, as the delivery log shows them (one shape for both stores). */
export function toDeliveryViews(rows: readonly DeliveryRow[], attemptRows: readonly AttemptRow[]): DeliveryView[] {
  const attemptsById = new Map<number, DeliveryView['attempts']>()
  for (const a of attemptRows) {
    const list = attemptsById.get(a.delivery_id) ?? []
    list.push({
      at: new Date(a.at).toISOString(),
      url: a.url,
      ...(a.status === null ? {} : { status: a.status }),
      ...(a.error === null ? {} : { error: a.error }),
      ms: a.ms,
    })
    attemptsById.set(a.delivery_id, list)
  }
  return rows.map((row) => ({
    id: row.id,
    source: row.source,
    destination: row.destination,
    messageId: row.message_id,
    type: row.type,
    status: row.status,
    createdAt: new Date(row.created_at).toISOString(),
    updatedAt: new Date(row.updated_at).toISOString(),
    nextAttemptAt: row.status === 'pending' ? new Date(row.next_attempt_at).toISOString() : null,
    lastError: row.last_error,
    attempts: attemptsById.get(row.id) ?? [],
    message: JSON.parse(row.message) as unknown,
  }))
}
