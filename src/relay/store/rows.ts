import type { DeliverableMessage } from '../../shared/message'
import { rememberStoredJson } from '../kit/stored-json'
import type { DeliveryRoute } from './circuits'
import type { EndpointFailure } from './endpoints'
import type {
  AttemptOutcome,
  AudienceChange,
  DeliveryStatus,
  DeliveryView,
  DueDelivery,
  NewDelivery,
  RequestRecord,
  SearchKeys,
} from './store'

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
  user_id: string | null
  event: string | null
  /** When it was parked behind paused circuits only, epoch ms (the claim credits that time back to its window). */
  paused_at: number | null
  /** The original delivery a replay's delivery re-sends (docs/replay.md); `null` for an original. */
  replay_of?: number | string | null
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
  response_body: string | null
  /** JSON of the request's headers, secrets hidden. */
  request_headers: string | null
  /** JSON of the function's `console` lines during the attempt. */
  console?: string | null
}

/** Dead letters a bulk replay puts back per statement: small enough never to hold the outbox for long. */
export const REPLAY_CHUNK = 1000

/** Routes as one JSON parameter, `[[source, destination], …]` (SQLite's json_each reads it). */
export function routesJson(routes: readonly DeliveryRoute[]): string {
  return JSON.stringify(routes.map((r) => [r.source, r.destination]))
}

/** An `attempts` row as the endpoints view shows a URL's last failure. */
export interface FailureRow {
  at: number
  status: number | null
  error: string | null
  response_body: string | null
}

/** A failure row as an {@link EndpointFailure}. */
export function toFailure(row: FailureRow): EndpointFailure {
  return {
    at: Number(row.at),
    ...(row.status === null ? {} : { status: row.status }),
    error: row.error ?? `HTTP ${row.status}`,
    ...(row.response_body === null ? {} : { responseBody: row.response_body }),
  }
}

/** A claimed `deliveries` row, as the worker attempts it. */
export function toDueDelivery(row: Omit<ClaimedRow, 'next_attempt_at'>): DueDelivery {
  const message = JSON.parse(row.message) as DeliverableMessage
  rememberStoredJson(message, row.message)
  return {
    id: Number(row.id),
    source: row.source,
    destination: row.destination,
    message,
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

/**
 * The `userId` and `event` a delivery is searched by: as given, or read from its JSON (a message
 * that is not an object, or a field that is not a string or a number, has none).
 */
export function searchKeys(delivery: NewDelivery): SearchKeys {
  if (delivery.searchKeys !== undefined) return delivery.searchKeys
  let message: unknown
  try {
    message = JSON.parse(delivery.json)
  } catch {
    return { userId: null, event: null }
  }
  return typeof message === 'object' && message !== null
    ? searchKeysOf(message as Record<string, unknown>)
    : { userId: null, event: null }
}

/** A message's search keys, from the message itself. */
export function searchKeysOf(message: Readonly<Record<string, unknown>>): SearchKeys {
  return { userId: keyOf(message['userId']), event: keyOf(message['event']) }
}

function keyOf(value: unknown): string | null {
  return typeof value === 'string' || typeof value === 'number' ? String(value) : null
}

/** A request's columns beyond status and error: what the receiver said, and the headers sent. */
export function requestDetails(r: RequestRecord): {
  responseBody: string | null
  requestHeaders: string | null
  console: string | null
} {
  return {
    responseBody: r.responseBody ?? null,
    requestHeaders: r.requestHeaders === undefined ? null : JSON.stringify(r.requestHeaders),
    console: r.console === undefined ? null : JSON.stringify(r.console),
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
      ...(a.response_body === null ? {} : { responseBody: a.response_body }),
      ...(a.request_headers === null
        ? {}
        : { requestHeaders: JSON.parse(a.request_headers) as Record<string, string> }),
      ...(typeof a.console === 'string' ? { console: JSON.parse(a.console) as string[] } : {}),
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
    ...(row.replay_of === null || row.replay_of === undefined ? {} : { replayOf: Number(row.replay_of) }),
    attempts: attemptsById.get(row.id) ?? [],
    message: JSON.parse(row.message) as unknown,
  }))
}
