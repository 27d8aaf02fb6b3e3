import type { ReplayAction, ReplayRecord, ReplayState } from './replays'
import { REPLAY_TRANSITIONS, replayBatch, REPLAY_PENDING_LIMIT, replaySpacing } from './replays'
import type { DeliveryFilter } from './store'

// How both stores read and write replays apart from their SQL: written once here.

/** A `replays` row as both stores read it (numbers may come as text from PostgreSQL's bigint). */
export interface ReplayRow {
  id: number | string
  state: ReplayState
  filter: string
  target_url: string | null
  rate: number
  matched: number | string
  queued: number | string
  cursor: number | string
  up_to: number | string
  next_at: number | string
  created_at: number | string
}

/** How many of a replay's deliveries stand in each status. */
export interface StatusCount {
  status: string
  n: number | string
}

/** The conditions every replay's filter adds: originals only (never replays' own), none erased. */
export const ORIGINALS = ['replay_of IS NULL', 'erased_at IS NULL'] as const

/**
 * The condition of a replay's delivery that is still to send: pending, of a replay not paused
 * (those wait for a resume). The same SQL in both dialects.
 */
export const REPLAY_PENDING = `status = 'pending' AND replay_of IS NOT NULL
  AND replay_id NOT IN (SELECT id FROM replays WHERE state = 'paused')`

/** A row and its deliveries' counts as a {@link ReplayRecord}. */
export function toReplayRecord(row: ReplayRow, counts: readonly StatusCount[]): ReplayRecord {
  const count = (...statuses: string[]) =>
    counts.filter((c) => statuses.includes(c.status)).reduce((sum, c) => sum + Number(c.n), 0)
  return {
    id: Number(row.id),
    state: row.state,
    filter: JSON.parse(row.filter) as DeliveryFilter,
    url: row.target_url ?? undefined,
    ratePerSecond: Number(row.rate),
    matched: Number(row.matched),
    queued: Number(row.queued),
    delivered: count('delivered'),
    // Settled without reaching the receiver: dead-lettered, dropped by the function, or cancelled.
    failed: count('failed', 'filtered'),
    createdAt: Number(row.created_at),
  }
}

/** The states `action` applies to, as one JSON parameter. */
export function fromStates(action: ReplayAction): string {
  return JSON.stringify(REPLAY_TRANSITIONS[action].from)
}

/**
 * How many deliveries the replay of `row` may make now, with `pending` of its deliveries pending:
 * its batch, less what the pending limit leaves no room for.
 */
export function roomFor(row: ReplayRow, pending: number): number {
  return Math.max(0, Math.min(replayBatch(Number(row.rate)), REPLAY_PENDING_LIMIT - pending))
}

/**
 * What a queueing step writes on its replay: where its cursor stands, when its pace lets it queue
 * again (from `now` or from its own pace, whichever is later: a late step makes no burst), and
 * whether it is done (it found fewer originals than it had room for).
 */
export function advanced(
  row: ReplayRow,
  picked: readonly (number | string)[],
  room: number,
  now: number,
): { cursor: number; queued: number; nextAt: number; done: boolean } {
  const rate = Number(row.rate)
  const cursor = picked.reduce<number>((max, id) => Math.max(max, Number(id)), Number(row.cursor))
  // With no room (its pending deliveries at the limit), it looks again after one batch's time.
  const spacing = replaySpacing(room === 0 ? replayBatch(rate) : picked.length, rate)
  return {
    cursor,
    queued: picked.length,
    nextAt: Math.max(Number(row.next_at), now) + spacing,
    done: room > 0 && picked.length < room,
  }
}
