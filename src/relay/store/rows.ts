import type { DeliverableMessage } from '../../shared/message'
import type { AttemptOutcome, AudienceChange, DeliveryStatus, DeliveryView, DueDelivery } from './store'

// How both stores turn rows into what the relay works with, and work out what to write: written
// once here, so the two dialects cannot drift apart in anything but their SQL.

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

/** The columns a claim returns. */
export type ClaimedRow = Pick<
  DeliveryRow,
  'id' | 'source' | 'destination' | 'message' | 'attempts' | 'first_attempt_at' | 'next_attempt_at'
>

/** An `attempts` row: one HTTP request of an attempt. */
export interface AttemptRow {
  delivery_id: number
  at: number
  url: string
  status: number | null
  error: string | null
  ms: number
}

/** A claimed `deliveries` row, as the worker attempts it. */
export function toDueDelivery(row: Omit<ClaimedRow, 'next_attempt_at'>): DueDelivery {
  return {
    id: Number(row.id),
    source: row.source,
    destination: row.destination,
    message: JSON.parse(row.message) as DeliverableMessage,
    attempts: Number(row.attempts),
    firstAttemptAt: row.first_attempt_at === null ? undefined : Number(row.first_attempt_at),
  }
}

/** The rows of a claim, oldest due first (RETURNING gives no order), as the worker attempts them. */
export function toDueDeliveries(rows: ClaimedRow[]): DueDelivery[] {
  rows.sort((a, b) => a.next_attempt_at - b.next_attempt_at || a.id - b.id)
  return rows.map(toDueDelivery)
}

/** What an outcome writes on its delivery: the new status, when it is due next, and the error shown. */
export function outcomeColumns(
  outcome: AttemptOutcome,
  now: number,
): { status: DeliveryStatus; nextAttemptAt: number; error: string | null } {
  const { next } = outcome
  return {
    status: next.status,
    nextAttemptAt: next.status === 'pending' ? next.nextAttemptAt : now,
    error: next.status === 'delivered' ? null : next.error,
  }
}

/** Who joined and who left an audience whose members were `current` and are now `userIds`. */
export function audienceChange(current: Iterable<string>, userIds: readonly string[]): AudienceChange {
  const before = new Set(current)
  const wanted = new Set(userIds)
  return {
    added: [...wanted].filter((id) => !before.has(id)),
    removed: [...before].filter((id) => !wanted.has(id)),
  }
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
