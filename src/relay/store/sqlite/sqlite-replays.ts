import { filterFields, type FilterField } from '../filter'
import {
  CANCELLED_REPLAY_ERROR,
  ERASED_ERROR,
  REPLAY_TRANSITIONS,
  type NewReplay,
  type QueueStep,
  type ReplayAction,
  type ReplayDue,
  type ReplayRecord,
  type ReplayStore,
} from '../replays'
import {
  advanced,
  fromStates,
  ORIGINALS,
  REPLAY_PENDING,
  type ReplayRow,
  roomFor,
  type StatusCount,
  toReplayRecord,
} from '../replay-rows'
import { type ClaimedRow, toDueDeliveries } from '../rows'
import type { ClaimRequest, DeliveryFilter } from '../store'
import type { StatementCache } from './statement-cache'
import { filterParams, where } from './statements'

/** Every statement of the SQLite replays (their schema: ../replays-schema.ts). */
export const SQLITE_REPLAY_STATEMENTS = {
  lastId: 'SELECT coalesce(max(id), 0) FROM deliveries',
  // Through the originals' time index (./originals-time-index.ts): a replay's window is its span of
  // created times. The status is compared as `+status` so that it never picks the dead letters'
  // index instead (every dead letter of the file read, to count those of one day).
  count: (fields: readonly FilterField[]) =>
    `SELECT count(*) FROM deliveries WHERE ${where(
      fields.filter((field) => field !== 'status'),
      [...ORIGINALS, 'id <= @upTo', ...(fields.includes('status') ? ['+status = @status'] : [])],
    )}`,
  // The cursor starts below the first original of the replay's window (read from the time index
  // alone), so that its first step does not read every older delivery of the file, in its write
  // transaction, to reach the window. Every match has an id at or above it.
  create: `
  INSERT INTO replays (state, filter, target_url, rate, matched, up_to, cursor, next_at, created_at, updated_at)
  VALUES ('running', @filter, @url, @rate, @matched, @upTo,
    (SELECT coalesce(min(id), @upTo + 1) - 1 FROM deliveries INDEXED BY deliveries_originals_time
     WHERE replay_of IS NULL AND erased_at IS NULL AND created_at >= @since AND created_at <= @until AND id <= @upTo),
    @now, @now, @now) RETURNING *`,
  get: 'SELECT * FROM replays WHERE id = ?',
  list: 'SELECT * FROM replays ORDER BY id DESC',
  counts: 'SELECT status, count(*) AS n FROM deliveries WHERE replay_id = ? GROUP BY status',
  change: `
  UPDATE replays SET state = @to, next_at = CASE WHEN @to = 'running' THEN max(next_at, @now) ELSE next_at END,
    updated_at = @now
  WHERE id = @id AND state IN (SELECT value FROM json_each(@from))`,
  // A cancelled replay's deliveries not yet sent are settled unsent (not dead letters: none failed).
  cancelPending: `
  UPDATE deliveries SET status = 'filtered', last_error = @error, updated_at = @now, lease_until = NULL, lease_owner = NULL
  WHERE replay_id = @id AND status = 'pending'`,
  nextRunning: "SELECT min(next_at) FROM replays WHERE state = 'running'",
  due: "SELECT * FROM replays WHERE state = 'running' AND next_at <= ? ORDER BY next_at, id LIMIT 1",
  pendingOf: "SELECT count(*) FROM deliveries WHERE replay_id = ? AND status = 'pending'",
  // The replay's next originals in id order, each copied as a new delivery due now.
  queue: (fields: readonly FilterField[]) => `
  INSERT INTO deliveries (source, destination, message_id, type, message, user_id, event, status, next_attempt_at,
    created_at, updated_at, replay_of, replay_id)
  SELECT source, destination, message_id, type, message, user_id, event, 'pending', @now, @now, @now, id, @replayId
  FROM deliveries WHERE ${where(fields, [...ORIGINALS, 'id > @cursor', 'id <= @upTo'])}
  ORDER BY id LIMIT @room
  RETURNING replay_of`,
  advance: `
  UPDATE replays SET cursor = @cursor, queued = queued + @queued, next_at = @nextAt,
    state = CASE WHEN @done AND state = 'running' THEN 'done' ELSE state END, updated_at = @now
  WHERE id = @id`,
  claim: `
  UPDATE deliveries SET lease_until = @leaseUntil, lease_owner = @owner
  WHERE id IN (
    SELECT id FROM deliveries
    WHERE source = @source AND ${REPLAY_PENDING} AND next_attempt_at <= @now
      AND (lease_until IS NULL OR lease_until <= @now)
    ORDER BY next_attempt_at, id LIMIT @limit)
  RETURNING id, source, destination, message, attempts, first_attempt_at, next_attempt_at, replay_id`,
  nextDue: `
  SELECT MIN(max(next_attempt_at, coalesce(lease_until, 0))) AS at FROM deliveries
  WHERE source = ? AND ${REPLAY_PENDING}`,
  targets: 'SELECT id, target_url FROM replays WHERE id IN (SELECT value FROM json_each(?))',
  // Erasure: the requests' recorded bodies and headers, then the deliveries (the delete messages
  // themselves are sent as they are). A pending one keeps its message until it is sent; a dead
  // letter is settled unsent. In SET, `status` is the row as it was.
  eraseAttempts: `
  UPDATE attempts SET response_body = NULL, request_headers = NULL
  WHERE delivery_id IN (SELECT id FROM deliveries WHERE user_id = ? AND type <> 'delete')`,
  erase: `
  UPDATE deliveries SET erased_at = @now,
    message = CASE WHEN status = 'pending' THEN message
      ELSE json_object('type', type, 'messageId', message_id, 'erased', json('true')) END,
    user_id = CASE WHEN status = 'pending' THEN user_id END,
    event = CASE WHEN status = 'pending' THEN event END,
    updated_at = CASE WHEN status = 'failed' THEN @now ELSE updated_at END,
    last_error = CASE WHEN status = 'failed' THEN @error ELSE last_error END,
    status = CASE WHEN status = 'failed' THEN 'filtered' ELSE status END
  WHERE user_id = @userId AND type <> 'delete' AND erased_at IS NULL`,
  prune: `
  DELETE FROM replays WHERE state IN ('done', 'cancelled') AND updated_at < ?
    AND NOT EXISTS (SELECT 1 FROM deliveries WHERE replay_id = replays.id AND status = 'pending')`,
} as const

/** The {@link ReplayStore} on the relay's SQLite database, over the store's own statements. */
export class SqliteReplays implements ReplayStore {
  readonly #sql: StatementCache
  readonly #now: () => number

  constructor(sql: StatementCache, now: () => number) {
    this.#sql = sql
    this.#now = now
  }

  async count(filter: DeliveryFilter): Promise<number> {
    return this.#count(filter, this.#lastId())
  }

  async create(replay: NewReplay): Promise<ReplayRecord> {
    const SQL = SQLITE_REPLAY_STATEMENTS
    return this.#sql.db
      .transaction(() => {
        const upTo = this.#lastId()
        const row = this.#sql.get(SQL.create).get({
          filter: JSON.stringify(replay.filter),
          url: replay.url ?? null,
          rate: replay.ratePerSecond,
          matched: this.#count(replay.filter, upTo),
          upTo,
          since: replay.filter.since ?? Number.MIN_SAFE_INTEGER,
          until: replay.filter.until ?? Number.MAX_SAFE_INTEGER,
          now: this.#now(),
        }) as ReplayRow
        return toReplayRecord(row, [])
      })
      .immediate()
  }

  async get(id: number): Promise<ReplayRecord | undefined> {
    const row = this.#sql.get(SQLITE_REPLAY_STATEMENTS.get).get(id) as ReplayRow | undefined
    return row === undefined ? undefined : this.#record(row)
  }

  async list(): Promise<ReplayRecord[]> {
    const rows = this.#sql.get(SQLITE_REPLAY_STATEMENTS.list).all() as ReplayRow[]
    return rows.map((row) => this.#record(row))
  }

  async change(id: number, action: ReplayAction): Promise<ReplayRecord | undefined | { refused: ReplayRecord }> {
    const SQL = SQLITE_REPLAY_STATEMENTS
    const now = this.#now()
    const changed = this.#sql.db
      .transaction(() => {
        const { to } = REPLAY_TRANSITIONS[action]
        const n = this.#sql.get(SQL.change).run({ id, to, now, from: fromStates(action) }).changes
        if (n === 1 && action === 'cancel')
          this.#sql.get(SQL.cancelPending).run({ id, now, error: CANCELLED_REPLAY_ERROR })
        return n === 1
      })
      .immediate()
    const replay = await this.get(id)
    if (replay === undefined || changed) return replay
    return { refused: replay }
  }

  async queue(): Promise<QueueStep> {
    const SQL = SQLITE_REPLAY_STATEMENTS
    const next = this.#sql.get(SQL.nextRunning).pluck().get() as number | null
    const now = this.#now()
    if (next === null) return { queued: 0, nextIn: undefined }
    if (next > now) return { queued: 0, nextIn: next - now }
    // IMMEDIATE: it reads before it writes, and other processes (--workers) may queue too.
    const queued = this.#sql.db
      .transaction(() => {
        const row = this.#sql.get(SQL.due).get(now) as ReplayRow | undefined
        if (row === undefined) return 0
        const room = roomFor(row, this.#sql.get(SQL.pendingOf).pluck().get(row.id) as number)
        const filter = JSON.parse(row.filter) as DeliveryFilter
        const fields = filterFields(filter)
        const picked =
          room === 0
            ? []
            : (this.#sql
                .get(SQL.queue(fields))
                .pluck()
                .all({
                  ...filterParams(fields, filter),
                  now,
                  replayId: row.id,
                  cursor: row.cursor,
                  upTo: row.up_to,
                  room,
                }) as number[])
        const step = advanced(row, picked, room, now)
        this.#sql.get(SQL.advance).run({ ...step, done: step.done ? 1 : 0, id: row.id, now })
        return picked.length
      })
      .immediate()
    const after = this.#sql.get(SQL.nextRunning).pluck().get() as number | null
    return { queued, nextIn: after === null ? undefined : after - now }
  }

  async claim({ source, limit, owner, leaseMs }: ClaimRequest): Promise<ReplayDue[]> {
    if (limit <= 0) return []
    const SQL = SQLITE_REPLAY_STATEMENTS
    const now = this.#now()
    const rows = this.#sql
      .get(SQL.claim)
      .all({ source, limit, owner, now, leaseUntil: now + leaseMs }) as (ClaimedRow & { replay_id: number })[]
    if (rows.length === 0) return []
    const replayIds = [...new Set(rows.map((r) => r.replay_id))]
    const targets = new Map(
      (this.#sql.get(SQL.targets).all(JSON.stringify(replayIds)) as { id: number; target_url: string | null }[]).map(
        (t) => [t.id, t.target_url ?? undefined],
      ),
    )
    const replayOf = new Map(rows.map((r) => [Number(r.id), Number(r.replay_id)]))
    return toDueDeliveries(rows).map((d) => {
      const replayId = replayOf.get(d.id)!
      return { ...d, replayId, url: targets.get(replayId) }
    })
  }

  async nextDueIn(source: string): Promise<number | undefined> {
    const at = this.#sql.get(SQLITE_REPLAY_STATEMENTS.nextDue).pluck().get(source) as number | null
    return at === null ? undefined : at - this.#now()
  }

  async eraseUser(userId: string): Promise<number> {
    const SQL = SQLITE_REPLAY_STATEMENTS
    return this.#sql.db
      .transaction(() => {
        this.#sql.get(SQL.eraseAttempts).run(userId)
        return this.#sql.get(SQL.erase).run({ userId, now: this.#now(), error: ERASED_ERROR }).changes
      })
      .immediate()
  }

  async prune(before: number): Promise<number> {
    return this.#sql.get(SQLITE_REPLAY_STATEMENTS.prune).run(before).changes
  }

  #lastId(): number {
    return this.#sql.get(SQLITE_REPLAY_STATEMENTS.lastId).pluck().get() as number
  }

  #count(filter: DeliveryFilter, upTo: number): number {
    const fields = filterFields(filter)
    return this.#sql
      .get(SQLITE_REPLAY_STATEMENTS.count(fields))
      .pluck()
      .get({ ...filterParams(fields, filter), upTo }) as number
  }

  #record(row: ReplayRow): ReplayRecord {
    return toReplayRecord(row, this.#sql.get(SQLITE_REPLAY_STATEMENTS.counts).all(row.id) as StatusCount[])
  }
}
