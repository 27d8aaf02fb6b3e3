import type { PoolClient } from 'pg'
import { filterFields, type FilterField } from '../filter'
import {
  type ArchiveReplayDue,
  type ArchiveStep,
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
  advancedFromArchive,
  FROM_OUTBOX,
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
import { type PostgresPool, transaction } from '../../kit/postgres/pool'
import { DELIVERY_IDS } from './schema6'
import { SPILL } from './delivery-blocks'
import { filterValues, MESSAGE_OF, where } from './statements'

// The store's clock, epoch ms: the database's, unless a test stands in for it ($1).
const CLOCK = 'SELECT coalesce($1::bigint, (extract(epoch FROM now()) * 1000)::bigint) AS now'

/**
 * Every statement of the PostgreSQL replays (their schema: ../replays-schema.ts). A statement made
 * from a filter takes the filter's values first ($1…, as filterValues lists them), then its own.
 */
export const POSTGRES_REPLAY_STATEMENTS = {
  clock: CLOCK,
  lastId: 'SELECT coalesce(max(id), 0) AS id FROM messages',
  count: (fields: readonly FilterField[]) =>
    `SELECT count(*) AS n FROM deliveries WHERE ${where(fields, [...ORIGINALS, `id <= $${valueCount(fields) + 1}`], 1)}`,
  // $1 filter, $2 url, $3 rate, $4 matched, $5 up to, $6 now.
  create: `
  INSERT INTO replays (state, filter, target_url, rate, matched, up_to, next_at, created_at, updated_at)
  VALUES ('running', $1, $2, $3, $4, $5, $6, $6, $6) RETURNING *`,
  get: 'SELECT * FROM replays WHERE id = $1',
  list: 'SELECT * FROM replays ORDER BY id DESC',
  counts: 'SELECT status, count(*) AS n FROM deliveries WHERE replay_id = $1 GROUP BY status',
  // $1 id, $2 the new state, $3 the states it applies to, $4 now.
  change: `
  UPDATE replays SET state = $2, next_at = CASE WHEN $2 = 'running' THEN greatest(next_at, $4) ELSE next_at END,
    updated_at = $4
  WHERE id = $1 AND state = ANY($3::text[])`,
  // A cancelled replay's deliveries not yet sent are settled unsent (not dead letters: none
  // failed): they leave the queue for an outcome. $1 id, $2 error, $3 now.
  cancelPending: `
  WITH gone AS (DELETE FROM queue WHERE replay_id = $1 AND status = 'pending' RETURNING *)
  INSERT INTO outcomes (id, created_at, status, attempts, first_attempt_at, last_error, settled_at)
  SELECT id, created_at, 'filtered', attempts, first_attempt_at, $2, $3 FROM gone`,
  nextRunning: `SELECT min(next_at) AS at FROM replays WHERE state = 'running' AND ${FROM_OUTBOX}`,
  // The most overdue running replay no other relay is queueing at this instant. $1 now.
  due: `
  SELECT * FROM replays WHERE state = 'running' AND ${FROM_OUTBOX} AND next_at <= $1 ORDER BY next_at, id LIMIT 1
  FOR UPDATE SKIP LOCKED`,
  // Replays from the archive (docs/replay.md). $1 filter, $2 url, $3 rate, $4 matched, $5 now.
  createFromArchive: `
  INSERT INTO replays (state, filter, target_url, rate, matched, up_to, next_at, created_at, updated_at,
    archive_position)
  VALUES ('running', $1, $2, $3, $4, 0, $5, $5, $5, '') RETURNING *`,
  nextFromArchive: "SELECT min(next_at) AS at FROM replays WHERE state = 'running' AND archive_position IS NOT NULL",
  // $1 now.
  dueFromArchive: `
  SELECT * FROM replays WHERE state = 'running' AND archive_position IS NOT NULL AND next_at <= $1
  ORDER BY next_at, id LIMIT 1`,
  // $1 id, $2 the position it must still stand at.
  stillAt: `
  SELECT rate, next_at FROM replays WHERE id = $1 AND state = 'running' AND archive_position = $2 FOR UPDATE`,
  // The copies, as new deliveries due now. $1 the copies (JSON), $2 now, $3 the replay's id.
  insertCopies: `
  WITH picked AS (
    SELECT nextval('${DELIVERY_IDS}') AS new_id, c.*
    FROM json_to_recordset($1::json) AS c(source text, destination text, "messageId" text, type text,
      json text, "userId" text, event text)
  ), written AS (
    INSERT INTO messages (id, created_at, source, destination, message_id, type, message, user_id, event,
      replay_of, replay_id)
    SELECT new_id, $2::bigint, source, destination, "messageId", type, json, "userId", event, 0, $3::bigint
    FROM picked
  )
  INSERT INTO queue (id, created_at, source, destination, status, next_attempt_at, updated_at, replay_of, replay_id)
  SELECT new_id, $2::bigint, source, destination, 'pending', $2::bigint, $2::bigint, 0, $3::bigint FROM picked`,
  // $1 id, $2 position, $3 queued, $4 next at, $5 done, $6 now.
  advanceFromArchive: `
  UPDATE replays SET archive_position = $2, queued = queued + $3, next_at = $4,
    state = CASE WHEN $5 THEN 'done' ELSE state END, updated_at = $6
  WHERE id = $1`,
  // $1 user id, $2 now.
  recordErasure: 'INSERT INTO erasures (user_id, erased_at) VALUES ($1, $2) ON CONFLICT (user_id) DO NOTHING',
  // $1 the user ids.
  erasedAmong: 'SELECT user_id FROM erasures WHERE user_id = ANY($1::text[])',
  pendingOf: "SELECT count(*) AS n FROM queue WHERE replay_id = $1 AND status = 'pending'",
  // The replay's next originals in id order, each copied as a new delivery due now. After the
  // filter's values: now, the replay's id, its cursor, up to, room.
  queue: (fields: readonly FilterField[]) => {
    const n = valueCount(fields)
    const [now, replayId, cursor, upTo, room] = [1, 2, 3, 4, 5].map((i) => `$${n + i}`)
    return `
  WITH picked AS (
    SELECT nextval('${DELIVERY_IDS}') AS new_id, original.* FROM (SELECT * FROM deliveries
      WHERE ${where(fields, [...ORIGINALS, `id > ${cursor}::bigint`, `id <= ${upTo}::bigint`], 1)}
      ORDER BY id LIMIT ${room}) original
  ), written AS (
    INSERT INTO messages (id, created_at, source, destination, message_id, type, message, user_id, event,
      replay_of, replay_id)
    SELECT new_id, ${now}::bigint, source, destination, message_id, type, message, user_id, event, id, ${replayId}::bigint
    FROM picked
  )
  INSERT INTO queue (id, created_at, source, destination, status, next_attempt_at, updated_at, replay_of, replay_id)
  SELECT new_id, ${now}::bigint, source, destination, 'pending', ${now}::bigint, ${now}::bigint, id, ${replayId}::bigint
  FROM picked
  RETURNING replay_of`
  },
  // $1 id, $2 cursor, $3 queued, $4 next at, $5 done, $6 now.
  advance: `
  UPDATE replays SET cursor = $2, queued = queued + $3, next_at = $4,
    state = CASE WHEN $5 AND state = 'running' THEN 'done' ELSE state END, updated_at = $6
  WHERE id = $1`,
  // As the live claim, on the replays' own index. $1 source, $2 clock, $3 limit, $4 owner, $5 the lease's length (ms).
  claim: `
  WITH clock AS (${CLOCK.replace('$1', '$2')})
  UPDATE queue d SET lease_until = clock.now + $5::bigint, lease_owner = $4
  FROM (
    SELECT id FROM queue
    WHERE source = $1 AND ${REPLAY_PENDING} AND next_attempt_at <= (SELECT now FROM clock)
      AND (lease_until IS NULL OR lease_until <= (SELECT now FROM clock))
    ORDER BY next_attempt_at, id LIMIT $3
    FOR UPDATE SKIP LOCKED
  ) due, clock
  WHERE d.id = due.id
  RETURNING d.id, d.source, d.destination, ${MESSAGE_OF('d')} AS message, d.attempts, d.first_attempt_at, d.next_attempt_at, d.replay_id,
    (SELECT target_url FROM replays WHERE replays.id = d.replay_id) AS target_url`,
  // $1 source, $2 clock.
  nextDue: `
  WITH clock AS (${CLOCK.replace('$1', '$2')})
  SELECT min(greatest(next_attempt_at, coalesce(lease_until, 0))) - (SELECT now FROM clock) AS wait FROM queue
  WHERE source = $1 AND ${REPLAY_PENDING}`,
  // Erasure: the requests' recorded bodies and headers, then the deliveries' messages, in every
  // partition (the kept one included; the delete messages themselves are sent as they are). A
  // pending one keeps its message until it is sent; a dead letter is settled unsent (it leaves the
  // queue for an outcome). $1 user id, $2 now, $3 error. Answers how many deliveries were erased.
  eraseAttempts: `
  UPDATE attempts SET response_body = NULL, request_headers = NULL
  WHERE delivery_id IN (SELECT id FROM messages WHERE user_id = $1 AND type <> 'delete')`,
  erase: `
  WITH hit AS (
    SELECT m.id, m.created_at, q.status FROM messages m LEFT JOIN queue q ON q.id = m.id
    WHERE m.user_id = $1 AND m.type <> 'delete' AND m.erased_at IS NULL
  ), erased AS (
    UPDATE messages m SET erased_at = $2,
      message = CASE WHEN hit.status = 'pending' THEN m.message
        ELSE json_build_object('type', m.type, 'messageId', m.message_id, 'erased', true)::text END,
      user_id = CASE WHEN hit.status = 'pending' THEN m.user_id END,
      event = CASE WHEN hit.status = 'pending' THEN m.event END
    FROM hit WHERE m.id = hit.id AND m.created_at = hit.created_at
    RETURNING m.id
  ), dead AS (
    DELETE FROM queue q USING hit WHERE q.id = hit.id AND q.status = 'failed' RETURNING q.*
  ), settled AS (
    INSERT INTO outcomes (id, created_at, status, attempts, first_attempt_at, last_error, settled_at)
    SELECT id, created_at, 'filtered', attempts, first_attempt_at, $3, $2 FROM dead
  )
  SELECT count(*) AS n FROM erased`,
  // $1 before.
  prune: `
  DELETE FROM replays WHERE state IN ('done', 'cancelled') AND updated_at < $1
    AND NOT EXISTS (SELECT 1 FROM queue WHERE replay_id = replays.id AND status = 'pending')`,
} as const

const SQL = POSTGRES_REPLAY_STATEMENTS

// How many parameters a filter's values take (the routes take two).
function valueCount(fields: readonly FilterField[]): number {
  return fields.length + (fields.includes('routes') ? 1 : 0)
}

/** The {@link ReplayStore} on PostgreSQL, over the store's pool, shared by every relay on the database. */
export class PostgresReplays implements ReplayStore {
  readonly #pool: PostgresPool
  /** A test's stand-in for the database's clock; `undefined`: the database's own. */
  readonly #databaseNow: (() => number) | undefined

  constructor(pool: PostgresPool, options: { databaseNow?: (() => number) | undefined } = {}) {
    this.#pool = pool
    this.#databaseNow = options.databaseNow
  }

  async count(filter: DeliveryFilter): Promise<number> {
    return transaction(this.#pool, async (client) => this.#count(client, filter, await lastId(client)))
  }

  async create(replay: NewReplay): Promise<ReplayRecord> {
    if (replay.archive !== undefined) {
      const { archive } = replay
      return transaction(this.#pool, async (client) => {
        const now = await this.#now(client)
        const { rows } = await client.query<ReplayRow>(SQL.createFromArchive, [
          JSON.stringify(replay.filter),
          replay.url ?? null,
          replay.ratePerSecond,
          archive.matched,
          now,
        ])
        return toReplayRecord(rows[0]!, [])
      })
    }
    return transaction(this.#pool, async (client) => {
      const upTo = await lastId(client)
      const matched = await this.#count(client, replay.filter, upTo)
      const now = await this.#now(client)
      const { rows } = await client.query<ReplayRow>(SQL.create, [
        JSON.stringify(replay.filter),
        replay.url ?? null,
        replay.ratePerSecond,
        matched,
        upTo,
        now,
      ])
      return toReplayRecord(rows[0]!, [])
    })
  }

  async get(id: number): Promise<ReplayRecord | undefined> {
    const { rows } = await this.#pool.query<ReplayRow>(SQL.get, [id])
    return rows[0] === undefined ? undefined : this.#record(rows[0])
  }

  async list(): Promise<ReplayRecord[]> {
    const { rows } = await this.#pool.query<ReplayRow>(SQL.list)
    return Promise.all(rows.map((row) => this.#record(row)))
  }

  async change(id: number, action: ReplayAction): Promise<ReplayRecord | undefined | { refused: ReplayRecord }> {
    const changed = await transaction(this.#pool, async (client) => {
      const now = await this.#now(client)
      const { rowCount } = await client.query(SQL.change, [
        id,
        REPLAY_TRANSITIONS[action].to,
        JSON.parse(fromStates(action)),
        now,
      ])
      if (rowCount === 1 && action === 'cancel')
        await client.query(SQL.cancelPending, [id, CANCELLED_REPLAY_ERROR, now])
      return rowCount === 1
    })
    const replay = await this.get(id)
    if (replay === undefined || changed) return replay
    return { refused: replay }
  }

  async queue(): Promise<QueueStep> {
    const next = await this.#nextRunning()
    const now = await this.#now(this.#pool)
    if (next === undefined) return { queued: 0, nextIn: undefined }
    if (next > now) return { queued: 0, nextIn: next - now }
    const queued = await transaction(this.#pool, async (client) => {
      const { rows } = await client.query<ReplayRow>(SQL.due, [now])
      const row = rows[0]
      if (row === undefined) return 0
      const pending = await client.query<{ n: string }>(SQL.pendingOf, [row.id])
      const room = roomFor(row, Number(pending.rows[0]!.n))
      const filter = JSON.parse(row.filter) as DeliveryFilter
      const fields = filterFields(filter)
      const picked =
        room === 0
          ? []
          : (
              await client.query<{ replay_of: string }>(SQL.queue(fields), [
                ...filterValues(fields, filter),
                now,
                row.id,
                row.cursor,
                row.up_to,
                room,
              ])
            ).rows.map((r) => r.replay_of)
      const step = advanced(row, picked, room, now)
      await client.query(SQL.advance, [row.id, step.cursor, step.queued, step.nextAt, step.done, now])
      return picked.length
    })
    const after = await this.#nextRunning()
    return { queued, nextIn: after === undefined ? undefined : after - now }
  }

  async dueFromArchive(): Promise<ArchiveReplayDue | { nextIn: number | undefined }> {
    const now = await this.#now(this.#pool)
    const { rows } = await this.#pool.query<ReplayRow>(SQL.dueFromArchive, [now])
    const row = rows[0]
    if (row === undefined) {
      const next = await this.#pool.query<{ at: string | null }>(SQL.nextFromArchive)
      const at = next.rows[0]?.at
      return { nextIn: at === null || at === undefined ? undefined : Math.max(0, Number(at) - now) }
    }
    const pending = await this.#pool.query<{ n: string }>(SQL.pendingOf, [row.id])
    const room = roomFor(row, Number(pending.rows[0]!.n))
    // Its filter and pace only: its counts (a read of every copy so far) are not needed to step.
    return { replay: toReplayRecord(row, []), position: row.archive_position ?? '', room }
  }

  async advanceFromArchive(id: number, from: string, step: ArchiveStep): Promise<number> {
    return transaction(this.#pool, async (client) => {
      const { rows } = await client.query<ReplayRow>(SQL.stillAt, [id, from])
      const row = rows[0]
      if (row === undefined) return 0
      const now = await this.#now(client)
      if (step.copies.length > 0) await client.query(SQL.insertCopies, [JSON.stringify(step.copies), now, id])
      const next = advancedFromArchive(row, step, now)
      await client.query(SQL.advanceFromArchive, [id, step.position, next.queued, next.nextAt, next.done, now])
      return step.copies.length
    })
  }

  async erasedAmong(userIds: readonly string[]): Promise<Set<string>> {
    if (userIds.length === 0) return new Set()
    const { rows } = await this.#pool.query<{ user_id: string }>(SQL.erasedAmong, [userIds])
    return new Set(rows.map((r) => r.user_id))
  }

  async claim({ source, limit, owner, leaseMs }: ClaimRequest): Promise<ReplayDue[]> {
    if (limit <= 0) return []
    const { rows } = await this.#pool.query<ClaimedRow & { replay_id: string; target_url: string | null }>(SQL.claim, [
      source,
      this.#databaseNow?.() ?? null,
      limit,
      owner,
      leaseMs,
    ])
    const byId = new Map(rows.map((r) => [Number(r.id), r]))
    return toDueDeliveries(rows).map((d) => {
      const row = byId.get(d.id)!
      return { ...d, replayId: Number(row.replay_id), url: row.target_url ?? undefined }
    })
  }

  async nextDueIn(source: string): Promise<number | undefined> {
    const { rows } = await this.#pool.query<{ wait: string | null }>(SQL.nextDue, [
      source,
      this.#databaseNow?.() ?? null,
    ])
    const wait = rows[0]?.wait
    return wait === null || wait === undefined ? undefined : Number(wait)
  }

  async eraseUser(userId: string): Promise<number> {
    return transaction(this.#pool, async (client) => {
      const now = await this.#now(client)
      await client.query(SQL.recordErasure, [userId, now])
      await client.query(SQL.eraseAttempts, [userId])
      await client.query(SPILL.ofUser, [userId]) // erase reads what is pending in the queue
      const { rows } = await client.query<{ n: string }>(SQL.erase, [userId, now, ERASED_ERROR])
      return Number(rows[0]!.n)
    })
  }

  async prune(before: number): Promise<number> {
    const { rowCount } = await this.#pool.query(SQL.prune, [before])
    return rowCount ?? 0
  }

  async #now(db: Pick<PoolClient, 'query'>): Promise<number> {
    const { rows } = await db.query<{ now: string }>(SQL.clock, [this.#databaseNow?.() ?? null])
    return Number(rows[0]!.now)
  }

  async #nextRunning(): Promise<number | undefined> {
    const { rows } = await this.#pool.query<{ at: string | null }>(SQL.nextRunning)
    const at = rows[0]?.at
    return at === null || at === undefined ? undefined : Number(at)
  }

  async #count(client: PoolClient, filter: DeliveryFilter, upTo: number): Promise<number> {
    const fields = filterFields(filter)
    const { rows } = await client.query<{ n: string }>(SQL.count(fields), [...filterValues(fields, filter), upTo])
    return Number(rows[0]!.n)
  }

  async #record(row: ReplayRow): Promise<ReplayRecord> {
    const { rows } = await this.#pool.query<StatusCount>(SQL.counts, [row.id])
    return toReplayRecord(row, rows)
  }
}

async function lastId(client: PoolClient): Promise<number> {
  const { rows } = await client.query<{ id: string }>(SQL.lastId)
  return Number(rows[0]!.id)
}
