import type { DueDelivery } from './due-delivery'
import type { ClaimRequest, DeliveryFilter } from './delivery-query'

// Replays (docs/replay.md): new deliveries of stored messages, made at a rate held across every
// relay on the store and sent in a lane of their own. The store keeps each replay's progress and
// makes its deliveries; the relay's replay lane sends them.

/** Where a replay stands. `done`: every match is queued (its deliveries may still be settling). */
export type ReplayState = 'running' | 'paused' | 'done' | 'cancelled'

/** An operator's change of a replay's state. */
export type ReplayAction = 'pause' | 'resume' | 'cancel'

/** The states each action applies to, and the one it leads to. */
export const REPLAY_TRANSITIONS: Readonly<Record<ReplayAction, { from: readonly ReplayState[]; to: ReplayState }>> = {
  pause: { from: ['running'], to: 'paused' },
  resume: { from: ['paused'], to: 'running' },
  cancel: { from: ['running', 'paused'], to: 'cancelled' },
}

/** A replay to start: which original deliveries, sent where, how fast. */
export interface NewReplay {
  /** Which original deliveries (never replays' own): `since` and `until` are given. */
  filter: DeliveryFilter
  /** One webhook URL of the source's destination; `undefined`: the destination's every URL. */
  url: string | undefined
  /** New deliveries per second at most, across every relay on the store. */
  ratePerSecond: number
  /**
   * A replay from the archive (its copies read from the archive's files, not the outbox), with the
   * records its window holds; `undefined`: a replay of the outbox.
   */
  archive?: { matched: number }
}

/** A replay as the store keeps it. */
export interface ReplayRecord {
  id: number
  state: ReplayState
  filter: DeliveryFilter
  url: string | undefined
  ratePerSecond: number
  /** Original deliveries the filter matched when the replay started. */
  matched: number
  /** New deliveries made so far. */
  queued: number
  /** Of those, delivered so far. */
  delivered: number
  /** Of those, dead-lettered (or dropped by the destination's function, or cancelled unsent) so far. */
  failed: number
  /** When it was started, epoch ms. */
  createdAt: number
  /** Where its copies are read from: the outbox, or the archive's files. */
  from: 'outbox' | 'archive'
}

/** A running replay from the archive whose pace lets it make copies now. */
export interface ArchiveReplayDue {
  /** The replay, its counts left at 0 (reading them costs a read of every copy so far). */
  replay: ReplayRecord
  /** Where it stands in its files, as {@link ReplayStore.advanceFromArchive} last wrote it ('' at first). */
  position: string
  /** How many copies it may make now ({@link REPLAY_PENDING_LIMIT} less those pending, at most a batch). */
  room: number
}

/** One copy a replay from the archive makes: a new delivery of a message read from a file. */
export interface ArchiveCopy {
  source: string
  destination: string
  messageId: string
  type: string
  /** The message's JSON. */
  json: string
  userId?: string | undefined
  event?: string | undefined
}

/** What one step of a replay from the archive read. */
export interface ArchiveStep {
  copies: readonly ArchiveCopy[]
  /** Where it stands after these. */
  position: string
  /** Every record of its window is read. */
  done: boolean
  /** The room it was given (its pace is kept by it when it had none). */
  room: number
}

/** A claimed replay delivery, with the replay it belongs to and where it goes. */
export interface ReplayDue extends DueDelivery {
  replayId: number
  /** The one URL it goes to; `undefined`: every URL of its destination. */
  url: string | undefined
}

/** What one step of the replays' queueing did. */
export interface QueueStep {
  /** New deliveries made. */
  queued: number
  /** How long until a running replay may make more, ms; `undefined` when none is running. */
  nextIn: number | undefined
}

/**
 * New deliveries a replay makes at most while this many of its deliveries are still pending: a
 * receiver that stalls holds up no more than this, and the live claim (which passes over pending
 * replay deliveries) never has many to pass over.
 */
export const REPLAY_PENDING_LIMIT = 100

/** How many deliveries one queueing step makes at `ratePerSecond`: about a tenth of a second's worth. */
export function replayBatch(ratePerSecond: number): number {
  return Math.max(1, Math.min(REPLAY_PENDING_LIMIT, Math.ceil(ratePerSecond / 10)))
}

/** How long `queued` deliveries take at `ratePerSecond`, ms (rounded up: never faster than the rate). */
export function replaySpacing(queued: number, ratePerSecond: number): number {
  return Math.ceil((queued * 1000) / ratePerSecond)
}

/** The `last_error` of a replay delivery its replay's cancel settled before it was sent. */
export const CANCELLED_REPLAY_ERROR = 'the replay was cancelled before this delivery was sent'

/** The `last_error` of a delivery whose user was erased (`POST /v1/deletions`) before it was sent. */
export const ERASED_ERROR = "erased: its user's data was deleted (POST /v1/deletions) before it was sent"

/**
 * The replays, in the relay's database, so every relay on it carries their work. Each write is one
 * transaction; the pace (`ratePerSecond`) is kept in the replay's row, judged by the store's clock,
 * so it holds across relays.
 */
export interface ReplayStore {
  /** How many original deliveries (not replays', not erased) `filter` matches now. */
  count(filter: DeliveryFilter): Promise<number>
  /** Starts a replay (running, nothing queued yet): counts its matches, written up to now. */
  create(replay: NewReplay): Promise<ReplayRecord>
  /** One replay with its counts, or `undefined`. */
  get(id: number): Promise<ReplayRecord | undefined>
  /** Every replay, newest first. */
  list(): Promise<ReplayRecord[]>
  /**
   * Applies `action` when the replay's state allows it ({@link REPLAY_TRANSITIONS}); a cancel
   * settles its deliveries not yet sent. Returns the replay as it is after, `undefined` when there
   * is none, or `'refused'` (with the replay) when its state does not allow the action.
   */
  change(id: number, action: ReplayAction): Promise<ReplayRecord | undefined | { refused: ReplayRecord }>
  /**
   * One step of queueing: the running replay most overdue by its pace makes its next few
   * deliveries (pending, due at once, `replayOf` their original), when fewer than
   * {@link REPLAY_PENDING_LIMIT} of its deliveries are pending; it is `done` once none is left.
   */
  queue(): Promise<QueueStep>
  /**
   * The running replay from the archive most overdue by its pace, with its position and room; or,
   * when none is due, how long until one is (`undefined`: none runs).
   */
  dueFromArchive(): Promise<ArchiveReplayDue | { nextIn: number | undefined }>
  /**
   * Writes one step of a replay from the archive, in one transaction, when it still runs and stands
   * at `from` (another relay may have stepped it meanwhile): its copies as new deliveries (pending,
   * due at once, `replayOf` 0: no original in the outbox), its position, pace and counts, and `done`
   * when `step.done`. Returns how many copies it wrote (0 when it had moved).
   */
  advanceFromArchive(id: number, from: string, step: ArchiveStep): Promise<number>
  /** Which of `userIds` were erased (`POST /v1/deletions`), ever: a replay from the archive skips them. */
  erasedAmong(userIds: readonly string[]): Promise<Set<string>>
  /** Claims due replay deliveries of `request.source` (of replays not paused), as the live claim does its own. */
  claim(request: ClaimRequest): Promise<ReplayDue[]>
  /** As `Store.nextDueIn`, for the source's replay deliveries. */
  nextDueIn(source: string): Promise<number | undefined>
  /**
   * Erases what the relay keeps of `userId`'s messages (not the delete messages themselves): each
   * settled delivery's body becomes an `erased` stub and its search keys go, a dead letter is
   * settled unsent, and every request's recorded answer and headers go. A pending delivery is
   * still sent (its message kept until retention prunes it). No replay picks an erased delivery.
   * The erasure is recorded for good, for replays from the archive ({@link erasedAmong}). Returns
   * how many deliveries were erased.
   */
  eraseUser(userId: string): Promise<number>
  /**
   * Deletes the replays that ended (`done`, `cancelled`) and last changed before `before` (epoch
   * ms), once none of their copies is pending (a copy finds its target in its replay's row).
   * Returns how many went.
   */
  prune(before: number): Promise<number>
}
