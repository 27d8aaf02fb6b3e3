import { EQUALITY_COLUMNS, type FilterField, isEqualityField } from '../filter'
import { SETTLED_STATUSES_SQL } from '../settled-index-schema'
import { routesJson, searchKeys } from '../rows'
import { orderFree } from '../ordering/order-hold'
import type { StatementCache } from './statement-cache'
import { DELIVERY_STATUSES, type DeliveryFilter, type DeliveryStatus, type NewDelivery } from '../store'

// The routes given as one JSON parameter ([[source, destination], …]), as rows.
const ROUTES_OF_JSON = "SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]') FROM json_each(?)"

/**
 * Every SQL statement of the SQLite store and its circuits, by name. The PostgreSQL store keeps
 * the same names in `../postgres/statements.ts` (a test holds the two sets equal), so the two
 * dialects can be read side by side; `docs/maintainers.md` says what each does.
 *
 * A statement whose text depends on a list's length (`IN (?, ?, …)`) is a function of that
 * length; its texts are prepared once each (`StatementCache`). Parameters are `?` in order, or
 * `@name` from an object.
 */
export const SQLITE_STATEMENTS = {
  // The outbox.
  // `rows` deliveries in one statement (ENQUEUE_ROWS says why), each row's values bound by
  // enqueueParams below, in this column order.
  enqueue: (rows: number) => `
      INSERT OR IGNORE INTO deliveries
        (source, destination, message_id, type, message, user_id, event, status, next_attempt_at, created_at, updated_at,
          order_key)
      VALUES ${Array(rows).fill("(?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?, ?, ?)").join(', ')}`,
  // A delivery parked behind paused circuits only gets the time it waited back: its window's start moves on by it.
  // One held behind an earlier pending delivery of its user (an ordered destination) waits: orderFree.
  claim: `
      UPDATE deliveries SET lease_until = @leaseUntil, lease_owner = @owner,
        first_attempt_at = first_attempt_at + coalesce(max(0, @now - paused_at), 0), paused_at = NULL
      WHERE id IN (
        SELECT id FROM deliveries d
        WHERE source = @source AND status = 'pending' AND replay_of IS NULL AND next_attempt_at <= @now
          AND (lease_until IS NULL OR lease_until <= @now) AND ${orderFree('deliveries', 'd')}
        ORDER BY next_attempt_at, id LIMIT @limit)
      RETURNING id, source, destination, message, attempts, first_attempt_at, next_attempt_at`,
  // When the source's next delivery is claimable: its due time or the end of its lease, whichever
  // is later (already past for one that became due, or was released, since the last claim).
  // Replays' deliveries have a lane of their own (docs/replay.md): claim and nextDue pass over them.
  nextDue: `
      SELECT MIN(max(next_attempt_at, coalesce(lease_until, 0))) AS at FROM deliveries d
      WHERE source = ? AND status = 'pending' AND replay_of IS NULL AND ${orderFree('deliveries', 'd')}`,
  renew: (ids: number) =>
    `UPDATE deliveries SET lease_until = ? WHERE lease_owner = ? AND status = 'pending' AND id IN (${marks(ids)})`,
  release: (ids: number) =>
    `UPDATE deliveries SET lease_until = NULL, lease_owner = NULL WHERE lease_owner = ? AND status = 'pending' AND id IN (${marks(ids)})`,
  // One outcome; its requests follow with recordAttempt, in the same transaction.
  record: `
      UPDATE deliveries SET status = ?, attempts = attempts + 1, first_attempt_at = coalesce(first_attempt_at, ?),
        next_attempt_at = ?, last_error = ?, updated_at = ?, lease_until = NULL, lease_owner = NULL
      WHERE id = ? AND status = 'pending'`,
  failUnconfigured: (configured: number) => `
        UPDATE deliveries SET status = 'failed', last_error = 'source "' || source || '" is no longer configured', updated_at = ?,
          lease_until = NULL, lease_owner = NULL
        WHERE status = 'pending'${configured === 0 ? '' : ` AND source NOT IN (${marks(configured)})`}`,
  retry: `
      UPDATE deliveries SET status = 'pending', attempts = 0, first_attempt_at = NULL, next_attempt_at = ?, updated_at = ?,
        lease_until = NULL, lease_owner = NULL, paused_at = NULL
      WHERE id = ? AND status = 'failed'`,
  get: 'SELECT * FROM deliveries WHERE id = ?',
  list: `
      SELECT * FROM deliveries
      WHERE id > @after AND (@status IS NULL OR status = @status) AND (@source IS NULL OR source = @source)
      ORDER BY id LIMIT @limit`,
  // A filtered page, newest first: the text names only the filter's fields (see filter.ts), so each
  // combination is planned with the index that fits it (message id, user id, status). The status is
  // written into the text: SQLite reads a partial index (deliveries_failed, deliveries_due) only for
  // a condition that names its predicate's value, never for a bound parameter.
  listNewest: (fields: readonly FilterField[], before: boolean, status?: DeliveryStatus) => `
      SELECT * FROM deliveries WHERE ${where(fields, before ? ['id < @before'] : [], status)} ORDER BY id DESC LIMIT @limit`,
  attemptsOf: (deliveries: number) => `
      SELECT delivery_id, at, url, status, error, ms, response_body, request_headers, console FROM attempts
      WHERE delivery_id IN (${marks(deliveries)}) ORDER BY id`,
  // Bulk replay: the id below which nothing written later is touched, how many dead letters match,
  // then a chunk of them at a time, newest first.
  lastId: 'SELECT coalesce(max(id), 0) FROM deliveries',
  countDeadLetters: (fields: readonly FilterField[]) => `
      SELECT count(*) FROM deliveries WHERE ${where(fields, ["status = 'failed'", 'id <= @upTo'])}`,
  retryMatching: (fields: readonly FilterField[]) => `
      UPDATE deliveries SET status = 'pending', attempts = 0, first_attempt_at = NULL, next_attempt_at = @now, updated_at = @now,
        lease_until = NULL, lease_owner = NULL, paused_at = NULL
      WHERE id IN (
        SELECT id FROM deliveries WHERE ${where(fields, ["status = 'failed'", 'id <= @upTo'])}
        ORDER BY id DESC LIMIT @chunk)
      RETURNING id`,
  // The endpoints view: per URL, what waits behind it and how its recent requests went.
  pendingFor: `
      SELECT count(*) AS count, min(created_at) AS oldest FROM deliveries
      WHERE status = 'pending' AND (source, destination) IN (${ROUTES_OF_JSON})`,
  recentRequests: `
      SELECT count(*) AS total, coalesce(sum(status BETWEEN 200 AND 299), 0) AS delivered FROM attempts
      WHERE url = ? AND at >= ?`,
  latencyAt: 'SELECT ms FROM attempts WHERE url = ? AND at >= ? ORDER BY ms LIMIT 1 OFFSET ?',
  lastFailure: `
      SELECT at, status, error, response_body FROM attempts
      WHERE url = ? AND at >= ? AND (status IS NULL OR status NOT BETWEEN 200 AND 299)
      ORDER BY at DESC, id DESC LIMIT 1`,
  // One query per status, so that each reads its own partial index (deliveries_due, deliveries_failed):
  // a status in a list matches neither predicate and reads the whole table, delivered history included.
  backlog: `
      SELECT source, 'failed' AS status, count(*) AS count, min(created_at) AS oldestCreatedAt FROM deliveries
      WHERE status = 'failed' GROUP BY source
      UNION ALL
      SELECT source, 'pending' AS status, count(*) AS count, min(created_at) AS oldestCreatedAt FROM deliveries
      WHERE status = 'pending' GROUP BY source
      ORDER BY source, status`,
  // The ids to prune; pruneAttempts and pruneDeliveries then delete them, in the same transaction.
  // INDEXED BY: on a fresh file (no ANALYZE) SQLite would read every settled row by status and sort them.
  prune: `SELECT id FROM deliveries INDEXED BY deliveries_settled WHERE ${SETTLED_STATUSES_SQL} AND updated_at < ? ORDER BY updated_at LIMIT ?`,

  // Audiences.
  members: 'SELECT user_id FROM audience_members WHERE source = ? AND audience = ?',
  addMembers: 'INSERT INTO audience_members (source, audience, user_id) VALUES (?, ?, ?)',
  removeMembers: 'DELETE FROM audience_members WHERE source = ? AND audience = ? AND user_id = ?',

  // Circuits.
  circuits: (urls: number) => `SELECT * FROM circuits WHERE url IN (${marks(urls)})`,
  // Counts failures; the closed circuit whose run reaches the threshold opens. In SET, every column
  // read is the row as it was, so each CASE judges the same old state.
  failCircuit: `
  INSERT INTO circuits (url, state, failures, probes, opened_at, next_probe_at, last_error, updated_at)
  VALUES (@url, CASE WHEN @failures >= @threshold THEN 'open' ELSE 'closed' END, @failures, 0,
    CASE WHEN @failures >= @threshold THEN @now END, CASE WHEN @failures >= @threshold THEN @firstProbeAt END,
    @error, @now)
  ON CONFLICT (url) DO UPDATE SET
    state = CASE WHEN state = 'closed' AND failures + @failures >= @threshold THEN 'open' ELSE state END,
    opened_at = CASE WHEN state = 'closed' AND failures + @failures >= @threshold THEN @now ELSE opened_at END,
    next_probe_at = CASE
      WHEN state = 'paused' THEN NULL
      WHEN state <> 'closed' THEN max(next_probe_at, @notBefore)
      WHEN failures + @failures >= @threshold THEN @firstProbeAt
    END,
    failures = failures + @failures,
    last_error = @error,
    updated_at = @now
  RETURNING *`,
  // The circuit's row goes; if it was open, wake then makes its routes' deliveries due, in the same transaction.
  // A paused circuit stays: an answer does not end an operator's pause.
  succeed: `DELETE FROM circuits WHERE url = ? AND state <> 'paused' RETURNING state`,
  takeProbe: `
  UPDATE circuits SET state = 'half-open', probe_owner = @owner, probe_lease_until = @leaseUntil, updated_at = @now
  WHERE url = @url AND state IN ('open', 'half-open') AND next_probe_at <= @now
    AND (probe_lease_until IS NULL OR probe_lease_until <= @now)
  RETURNING *`,
  failProbe: `
  UPDATE circuits SET state = 'open', probes = probes + 1, failures = failures + 1, next_probe_at = @nextProbeAt,
    probe_owner = NULL, probe_lease_until = NULL, last_error = @error, updated_at = @now
  WHERE url = @url AND probe_owner = @owner
  RETURNING *`,
  returnProbe: `
  UPDATE circuits SET state = 'open', next_probe_at = @nextProbeAt, probe_owner = NULL, probe_lease_until = NULL,
    updated_at = @now
  WHERE url = @url AND probe_owner = @owner
  RETURNING *`,
  renewProbes: (urls: number) =>
    `UPDATE circuits SET probe_lease_until = ? WHERE probe_owner = ? AND url IN (${marks(urls)})`,
  claimProbe: (routes: number) => `
        UPDATE deliveries SET lease_until = ?, lease_owner = ?
        WHERE id = (
          SELECT id FROM deliveries d
          WHERE status = 'pending' AND (source, destination) IN (VALUES ${Array(routes).fill('(?, ?)').join(', ')})
            AND replay_of IS NULL AND (lease_until IS NULL OR lease_until <= ?) AND ${orderFree('deliveries', 'd')}
          ORDER BY next_attempt_at, id LIMIT 1)
        RETURNING id, source, destination, message, attempts, first_attempt_at`,
  // Behind paused circuits only, the window is not cut short and the wait is noted (paused_at):
  // the next claim gives that time back to the window. Anonymous parameters: the URLs, then the ids.
  park: (ids: number, urls: number) => `
          WITH held AS (
            SELECT count(*) AS down, coalesce(sum(state = 'paused'), 0) AS paused FROM circuits
            WHERE url IN (${marks(urls)}) AND state <> 'closed')
          UPDATE deliveries SET
            next_attempt_at = CASE WHEN (SELECT paused FROM held) = @urls THEN @until
              ELSE min(@until, coalesce(first_attempt_at, @now) + @window) END,
            paused_at = CASE WHEN (SELECT paused FROM held) = @urls THEN @now END,
            first_attempt_at = coalesce(first_attempt_at, @now), last_error = @error, updated_at = @now,
            lease_until = NULL, lease_owner = NULL
          WHERE id IN (${marks(ids)}) AND lease_owner = @owner AND status = 'pending' AND (SELECT down FROM held) = @urls
          RETURNING id`,
  // An operator's pause: whatever the circuit was, paused; a probe held is void (its holder's writes no longer match).
  pauseCircuit: `
  INSERT INTO circuits (url, state, failures, probes, paused_at, updated_at) VALUES (@url, 'paused', 0, 0, @now, @now)
  ON CONFLICT (url) DO UPDATE SET state = 'paused', paused_at = coalesce(paused_at, @now), next_probe_at = NULL,
    probe_owner = NULL, probe_lease_until = NULL, updated_at = @now
  RETURNING *`,
  // The pause ends: the row goes (closed); wake then makes the routes' deliveries due, in the same transaction.
  resumeCircuit: `DELETE FROM circuits WHERE url = ? AND state = 'paused' RETURNING state`,
  // A route's deliveries held by its circuit are due now (after succeed or resumeCircuit).
  wake: `
  UPDATE deliveries SET next_attempt_at = @now, updated_at = @now
  WHERE status = 'pending' AND source = @source AND destination = @destination AND next_attempt_at > @now`,

  // SQLite only: one file serves one relay, so what its previous run held is given back at start;
  // one writer at a time, so a batch is several statements in one transaction.
  voidLeases: 'UPDATE deliveries SET lease_until = NULL, lease_owner = NULL WHERE lease_until IS NOT NULL',
  giveBackProbes: `UPDATE circuits SET state = 'open', probe_owner = NULL, probe_lease_until = NULL WHERE state = 'half-open'`,
  recordAttempt: `
  INSERT INTO attempts (delivery_id, at, url, status, error, ms, response_body, request_headers, console) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  statusOf: 'SELECT status FROM deliveries WHERE id = ?',
  pruneAttempts: (ids: number) => `DELETE FROM attempts WHERE delivery_id IN (${marks(ids)})`,
  pruneDeliveries: (ids: number) => `DELETE FROM deliveries WHERE id IN (${marks(ids)})`,
} as const

/** The statements only SQLite has (see the comment above them), left out when the dialects are compared. */
export const SQLITE_ONLY: readonly (keyof typeof SQLITE_STATEMENTS)[] = [
  'voidLeases',
  'giveBackProbes',
  'recordAttempt',
  'statusOf',
  'pruneAttempts',
  'pruneDeliveries',
]

/**
 * The commits that do not wait for the disk, and back (docs/sqlite.md, "What waits for the disk"):
 * run as statements prepared once, as `db.pragma()` prepares its statement anew on every call.
 */
export const SYNC_NORMAL = 'PRAGMA synchronous = NORMAL'
export const SYNC_FULL = 'PRAGMA synchronous = FULL'

/**
 * Runs `write` (one transaction) with `synchronous = NORMAL`: its commit does not flush (the WAL's
 * flush comes later, off the thread, or with the next commit that waits), then `FULL` again.
 */
export function withoutWaitingForDisk<T>(sql: StatementCache, write: () => T): T {
  sql.get(SYNC_NORMAL).run()
  try {
    return write()
  } finally {
    sql.get(SYNC_FULL).run()
  }
}

/** The most parameters bound to one statement: lists longer than this are written in chunks. */
export const SQLITE_CHUNK = 500

/** The parameters of one row of `enqueue`. */
export const ENQUEUE_PARAMS = 11

/**
 * Writes a delivery's parameters for `enqueue` into `params` from `at`, in the statement's column
 * order (the `ENQUEUE_PARAMS` of one row).
 */
export function enqueueParams(d: NewDelivery, now: number, params: unknown[], at: number): void {
  const { userId, event } = searchKeys(d)
  params[at] = d.source
  params[at + 1] = d.destination
  params[at + 2] = d.messageId
  params[at + 3] = d.type
  params[at + 4] = d.json
  params[at + 5] = userId
  params[at + 6] = event
  params[at + 7] = now
  params[at + 8] = now
  params[at + 9] = now
  params[at + 10] = d.orderKey ?? null
}

/**
 * The rows of one `enqueue` statement (the rest of a batch, fewer, goes one row at a time, so two
 * texts are prepared in all): each statement run costs better-sqlite3 a round into C and back,
 * more than a row's insert itself. Measured on 40,000 rows in transactions of 100: 4.2–4.8 µs per
 * row one row a statement, 2.7–3.6 µs at 25 rows, no better at 50.
 */
export const ENQUEUE_ROWS = 25

/**
 * The conditions of a filter (named parameters, as `filterParams` binds them) after `first`. With
 * `status` (one of {@link DELIVERY_STATUSES}, checked here), the status is written into the text
 * rather than bound, so that SQLite may read the partial index of that status.
 */
export function where(fields: readonly FilterField[], first: readonly string[], status?: DeliveryStatus): string {
  const conditions = [...first]
  for (const field of fields) {
    if (field === 'status' && status !== undefined) conditions.push(statusIs(status))
    else if (isEqualityField(field)) conditions.push(`${EQUALITY_COLUMNS[field]} = @${field}`)
    else if (field === 'since') conditions.push('created_at >= @since')
    else if (field === 'until') conditions.push('created_at <= @until')
    else conditions.push(`(source, destination) IN (${ROUTES_OF_JSON.replace('?', '@routes')})`)
  }
  return conditions.length === 0 ? '1' : conditions.join(' AND ')
}

/** The named parameters of a filter's conditions: its fields, the routes as JSON. */
export function filterParams(fields: readonly FilterField[], filter: DeliveryFilter): Record<string, unknown> {
  const params: Record<string, unknown> = {}
  for (const field of fields) {
    params[field] = field === 'routes' ? routesJson(filter.routes ?? []) : filter[field]
  }
  return params
}

// A status written into a statement's text: only a known status, never what a caller passed as is.
// Pending as `+status`: the claim's index (pending only, by due time) would otherwise be read whole
// and sorted by id once statistics exist (ANALYZE, `PRAGMA optimize`): 0.35–0.63 s among 1,000,000
// deliveries with 50,000 pending (`node bench/store-search.mjs`), where reading by id stops at a page.
function statusIs(status: DeliveryStatus): string {
  if (!DELIVERY_STATUSES.includes(status)) throw new TypeError(`unknown delivery status: ${String(status)}`)
  return status === 'pending' ? "+status = 'pending'" : `status = '${status}'`
}

// `n` parameter marks, for `IN (…)`.
function marks(n: number): string {
  return Array(n).fill('?').join(',')
}
