import { endpointId } from '../kit/endpoint-id'

// What the endpoints view shows of a destination beyond its circuit and its outbox counts (an
// archive's last file, a warehouse's last load and conflicts), as this process last saw it. Kept
// by target, under the endpoint's id, so the console finds a row's status without reaching into
// delivery; one board per process, since a target is one place however many relays send there.

/** What a destination last did, as the endpoints view shows it beside the target. */
export interface DestinationStatus {
  /** Its last success: when, epoch ms, and what (`file source=web/…/x.ndjson.gz`, `load of 120 rows`). */
  last?: { at: number; text: string }
  /** Values stored as NULL for a type conflict since this process started (the warehouse). */
  conflicts?: number
}

const board = new Map<string, DestinationStatus>()

/** Records what the destination at `target` (the whole target, as its sender names it) just did. */
export function reportStatus(target: string, change: DestinationStatus): void {
  const id = endpointId(target)
  const now = board.get(id) ?? {}
  board.set(id, {
    ...now,
    ...(change.last === undefined ? {} : { last: change.last }),
    ...(change.conflicts === undefined ? {} : { conflicts: (now.conflicts ?? 0) + change.conflicts }),
  })
}

/** What the destination of the endpoint `id` last did in this process; `undefined`: nothing yet. */
export function statusOf(id: string): DestinationStatus | undefined {
  return board.get(id)
}
