import type { FilterField } from '../filter'
import { deadLetters, newestByStatus, parameterCount, statusIs, where } from './filter-sql'
import { ENQUEUE_FUNCTION } from './enqueue-function'
import { BODIES_OF } from './message-bodies'
import { SETTLED_AT_ONCE_BEFORE, WRITES_OUTCOME } from './first-attempt-delivered'
import { orderFree } from '../ordering/order-hold'
import { DAY_MS } from './partitions'
import { BLOCK_OF, CLAIM_BLOCKS, HELD_BY_BLOCKS, RECORD_HELD } from './delivery-blocks'

export { filterValues, where } from './filter-sql'

/**
 * Every SQL statement of the PostgreSQL store and its circuits, by name. The SQLite store keeps
 * the same names in `../sqlite/statements.ts` (a test holds the two sets equal), so the two
 * dialects can be read side by side; `docs/maintainers.md` says what each does.
 *
 * Arrays travel as one parameter each (unnest, `= ANY`), so a batch of any size is one statement,
 * one round trip: no text depends on a list's length.
 */

// The worker's writes (claims, outcomes, renewals) commit without waiting for the WAL to reach
// the disk (synchronous_commit off for that transaction alone, set within the statement so it
// costs no round trip). A database crash may then lose the last few of them: those deliveries
// are pending again and are sent again — at-least-once holds — while ingest, whose 2xx promises
// the message is kept, always waits for the disk. (The SQLite store does the same.)
const RELAXED = `relaxed AS (SELECT set_config('synchronous_commit', 'off', true))`

// Leases and due times are judged, and written, by the database's clock, never a relay's: relays
// whose clocks disagree then still agree on whose lease is live and what is due. The relay passes
// durations (a lease's length, a retry's delay, how long ago an attempt started) and the statement
// adds them to this one instant. The parameter named is null in production; a test may pass an
// instant to stand in for the database's clock (`PostgresStoreOptions.databaseNow`).
const CLOCK = (parameter: string) =>
  `clock AS (SELECT coalesce(${parameter}::bigint, (extract(epoch FROM now()) * 1000)::bigint) AS now)`
// The instant of CLOCK, where a FROM cannot take it (a subquery locking its rows).
const NOW = '(SELECT now FROM clock)'

// A queue row's message JSON (q: the queue row), read from its day's partition.
export const MESSAGE_OF = (q: string) =>
  `(SELECT message FROM messages m WHERE m.id = ${q}.id AND m.created_at = ${q}.created_at)`

export const POSTGRES_STATEMENTS = {
  // The outbox (schema 6: ./schema6.ts).
  // New deliveries, in one statement (in the store's transaction, whose COMMIT reports a standby
  // that did not confirm): the function (./enqueue-function.ts) takes the messages' locks, so that two relays writing the
  // same new message take turns, then skips a message already written (same message id, source and
  // destination, not a replay's copy: in any partition) or given twice in the batch; each new
  // delivery is a message row in a block of its source (./delivery-blocks.ts), due at once. $1–$7 one
  // array per column but $5, the messages' JSON as one text (BODIES_OF says why), $8 clock.
  // Returns how many were written.
  enqueue: `SELECT ${ENQUEUE_FUNCTION}($1::text[], $2::text[], $3::text[], $4::text[],
    ${BODIES_OF('$5')}, $6::text[], $7::text[], $8::bigint) AS written`,
  // The same for a batch with deliveries to an ordered destination: $9 their ordering keys (NULL for
  // the others), on their queue rows (./ordering-schema.ts). A batch without one takes enqueue.
  enqueueOrdered: `SELECT ${ENQUEUE_FUNCTION}($1::text[], $2::text[], $3::text[], $4::text[],
    ${BODIES_OF('$5')}, $6::text[], $7::text[], $8::bigint, $9::text[]) AS written`,
  // Picks the source's oldest due queue rows, then its oldest blocks (./delivery-blocks.ts: the
  // deliveries no queue row holds yet), that no live lease holds, skipping rows another relay
  // is claiming at this instant (SKIP LOCKED), and leases them. Row locks last only for the
  // statement; from then on the lease (lease_until) keeps other relays off. $1 source, $2 clock,
  // $3 limit, $4 owner, $5 the lease's length (ms). Returns the instant judged at, so the store can
  // give first_attempt_at to the relay on its own clock. A delivery parked behind paused circuits
  // only gets the time it waited back: its window's start moves on by it (paused_at is written by
  // park on the relay's clock: a skewed relay shifts that gift by its skew, never a lease).
  // Replays' deliveries have a lane of their own (docs/replay.md): claim, nextDue and claimProbe pass over them.
  // One held behind an earlier pending delivery of its user (an ordered destination) waits: orderFree.
  claim: `
  WITH ${RELAXED}, ${CLOCK('$2')}, queued AS (
    UPDATE queue d SET lease_until = clock.now + $5::bigint, lease_owner = $4,
      first_attempt_at = d.first_attempt_at + coalesce(greatest(0, clock.now - d.paused_at), 0), paused_at = NULL
    FROM (
      SELECT id FROM queue q
      WHERE source = $1 AND status = 'pending' AND replay_of IS NULL AND next_attempt_at <= ${NOW}
        AND (lease_until IS NULL OR lease_until <= ${NOW}) AND ${orderFree('queue', 'q')}
      ORDER BY next_attempt_at, id
      LIMIT $3::bigint
      FOR UPDATE SKIP LOCKED
    ) due, relaxed, clock
    WHERE d.id = due.id
    RETURNING d.id, d.source, d.destination, ${MESSAGE_OF('d')} AS message, d.attempts, d.first_attempt_at,
      d.next_attempt_at
  ),
  ${CLAIM_BLOCKS(NOW)}
  SELECT queued.*, clock.now AS clock_now FROM queued, clock
  UNION ALL
  SELECT id, source, destination, message, 0, NULL, created_at, clock.now FROM held, clock`,
  // How long until the source's next delivery is claimable (ms, 0 or less: already), by the
  // database's clock: the first one no live lease holds, or the end of the first live lease on a due
  // one. (A delivery not yet due is never leased: a claim takes only due ones, and recording ends
  // the lease.) One due and free is counted too: it became due (or was released) since the claim,
  // which judged at an earlier instant. $1 source, $2 clock.
  nextDue: `
  WITH ${CLOCK('$2')}
  SELECT least(
    (SELECT next_attempt_at FROM queue q
     WHERE source = $1 AND status = 'pending' AND replay_of IS NULL AND (lease_until IS NULL OR lease_until <= ${NOW})
       AND ${orderFree('queue', 'q')}
     ORDER BY next_attempt_at LIMIT 1),
    (SELECT min(lease_until) FROM queue
     WHERE source = $1 AND status = 'pending' AND replay_of IS NULL AND next_attempt_at <= ${NOW} AND lease_until > ${NOW}),
    (SELECT created_at FROM delivery_blocks
     WHERE source = $1 AND (lease_until IS NULL OR lease_until <= ${NOW}) ORDER BY source, first_id LIMIT 1),
    (SELECT min(lease_until) FROM delivery_blocks WHERE source = $1 AND lease_until > ${NOW})
  ) - ${NOW} AS wait`,
  // The leases of these queue rows and of the blocks holding these ids.
  // $1 owner, $2 ids, $3 the lease's length from now (ms), $4 clock.
  renew: `
  WITH ${RELAXED}, ${CLOCK('$4')}, blocks AS (
    UPDATE delivery_blocks SET lease_until = clock.now + $3::bigint FROM relaxed, clock
    WHERE first_id = ANY (ARRAY(SELECT ${BLOCK_OF('i')} FROM unnest($2::bigint[]) AS i)) AND lease_owner = $1
  )
  UPDATE queue SET lease_until = clock.now + $3::bigint FROM relaxed, clock
  WHERE id = ANY($2::bigint[]) AND lease_owner = $1 AND status = 'pending'`,
  // Queue rows only: the store spills the ids' blocks into queue rows first (./delivery-blocks.ts).
  release: `
  UPDATE queue SET lease_until = NULL, lease_owner = NULL
  WHERE id = ANY($2::bigint[]) AND lease_owner = $1 AND status = 'pending'`,
  // A whole batch of outcomes: the deliveries' new state (only those still pending: one recorded
  // already by a relay whose lease ran out keeps its state) and every request into the attempts log.
  // A settled delivery (delivered, filtered) leaves the queue for an appended outcome row (none
  // when delivered at its first attempt: ./first-attempt-delivered.ts); one still pending or dead
  // has its queue row updated; one its block holds is taken off the block (RECORD_HELD). A
  // request's partition is its delivery's day (its message's).
  // Times are durations from the database's clock: how long ago the attempt started ($3, $8) and
  // how long until the delivery is due again ($4: 0 when it is not pending); $6 clock.
  record: `
  WITH ${RELAXED}, ${CLOCK('$6')}, outcome AS (
    SELECT * FROM unnest($1::bigint[], $2::text[], $3::bigint[], $4::bigint[], $5::text[])
      AS o (id, status, ago, due_in, error)
  ), settled AS (
    DELETE FROM queue d USING outcome
    WHERE d.id = outcome.id AND d.status = 'pending' AND outcome.status IN ('delivered', 'filtered')
    RETURNING d.id, d.created_at, d.attempts, d.first_attempt_at, outcome.status, outcome.ago, outcome.error
  ), appended AS (
    INSERT INTO outcomes (id, created_at, status, attempts, first_attempt_at, last_error, settled_at)
    SELECT settled.id, settled.created_at, settled.status, settled.attempts + 1,
      coalesce(settled.first_attempt_at, clock.now - settled.ago), settled.error, clock.now
    FROM settled, clock
    WHERE ${WRITES_OUTCOME('settled', '$7::bigint[]')}
  ), updated AS (
    UPDATE queue d SET
      status = outcome.status, attempts = d.attempts + 1,
      first_attempt_at = coalesce(d.first_attempt_at, clock.now - outcome.ago),
      next_attempt_at = clock.now + outcome.due_in, last_error = outcome.error, updated_at = clock.now,
      lease_until = NULL, lease_owner = NULL
    FROM outcome, relaxed, clock
    WHERE d.id = outcome.id AND d.status = 'pending' AND outcome.status IN ('pending', 'failed')
  ),
  ${RECORD_HELD('$7::bigint[]')}
  INSERT INTO attempts (delivery_id, at, url, status, error, ms, response_body, request_headers, console, created_at)
  SELECT a.id, clock.now - a.ago, a.url, a.status, a.error, a.ms, a.response_body, a.request_headers, a.console,
    coalesce(h.created_at, (SELECT created_at FROM queue q WHERE q.id = a.id),
      (SELECT created_at FROM messages m WHERE m.id = a.id), 0)
  FROM unnest($7::bigint[], $8::bigint[], $9::text[], $10::int[], $11::text[], $12::int[], $13::text[], $14::text[], $15::text[])
    AS a (id, ago, url, status, error, ms, response_body, request_headers, console)
  LEFT JOIN (SELECT id, created_at FROM held) h ON h.id = a.id, clock`,
  failUnconfigured: `UPDATE queue SET status = 'failed', last_error = 'source "' || source || '" is no longer configured',
         updated_at = $1, lease_until = NULL, lease_owner = NULL
       WHERE status = 'pending' AND NOT (source = ANY($2::text[]))`,
  // The delivery's status before, and whether it was put back in the queue.
  retry: `WITH retried AS (
         UPDATE queue SET status = 'pending', attempts = 0, first_attempt_at = NULL, next_attempt_at = $2,
           updated_at = $2, lease_until = NULL, lease_owner = NULL, paused_at = NULL
         WHERE id = $1 AND status = 'failed'
         RETURNING id)
       SELECT status, EXISTS (SELECT 1 FROM retried) AS retried FROM deliveries WHERE id = $1`,
  get: 'SELECT * FROM deliveries WHERE id = $1',
  list: `SELECT * FROM deliveries
       WHERE id > $1 AND ($2::text IS NULL OR ${statusIs('$2::text')}) AND ($3::text IS NULL OR source = $3)
       ORDER BY id LIMIT $4`,
  // A filtered page, newest first: the text names only the filter's fields (see filter.ts), so each
  // combination is planned with the index that fits it (message id, user id, status). The
  // filter's values come first ($1…, as filterValues lists them), then before (if given) and limit.
  listNewest: (fields: readonly FilterField[], before: boolean) => {
    const next = parameterCount(fields) + 1
    const conditions = before ? [`id < $${next}`] : []
    const limit = `$${before ? next + 1 : next}`
    if (fields.includes('status')) return newestByStatus(fields, conditions, limit)
    return `SELECT * FROM deliveries WHERE ${where(fields, conditions, 1)} ORDER BY id DESC LIMIT ${limit}`
  },
  attemptsOf: `
  SELECT delivery_id, at, url, status, error, ms, response_body, request_headers, console FROM attempts
  WHERE delivery_id = ANY($1::bigint[]) ORDER BY id`,
  // Bulk replay: the id below which nothing written later is touched, how many dead letters match,
  // then a chunk of them at a time, newest first. $1 upTo, ($2 chunk, $3 now,) then the filter's values.
  lastId: 'SELECT coalesce(max(id), 0) AS id FROM messages',
  countDeadLetters: (fields: readonly FilterField[]) =>
    `SELECT count(*)::int AS count FROM ${deadLetters(fields, ['id <= $1'], 2)}`,
  // Picked from the statement's snapshot; one changed meanwhile (retried by hand) is left as it is.
  retryMatching: (fields: readonly FilterField[]) => `
  WITH picked AS (
    SELECT id FROM ${deadLetters(fields, ['id <= $1'], 4)}
    ORDER BY id DESC LIMIT $2
  ), retried AS (
    UPDATE queue d SET status = 'pending', attempts = 0, first_attempt_at = NULL, next_attempt_at = $3,
      updated_at = $3, lease_until = NULL, lease_owner = NULL, paused_at = NULL
    FROM picked WHERE d.id = picked.id AND d.status = 'failed'
    RETURNING 1
  )
  SELECT (SELECT count(*) FROM picked)::int AS picked, (SELECT min(id) FROM picked) AS low,
    (SELECT count(*) FROM retried)::int AS retried`,
  // The endpoints view: per URL, what waits behind it and how its recent requests went.
  pendingFor: `
  SELECT coalesce(sum(n), 0)::int AS count, min(oldest) AS oldest FROM (
    SELECT count(*) AS n, min(created_at) AS oldest FROM queue
    WHERE status = 'pending' AND (source, destination) IN (SELECT * FROM unnest($1::text[], $2::text[]))
    UNION ALL
    SELECT count(*), min(created_at) FROM ${HELD_BY_BLOCKS} h
    WHERE (source, destination) IN (SELECT * FROM unnest($1::text[], $2::text[]))) p`,
  recentRequests: `
  SELECT count(*)::int AS total, (count(*) FILTER (WHERE status BETWEEN 200 AND 299))::int AS delivered FROM attempts
  WHERE url = $1 AND at >= $2`,
  latencyAt: 'SELECT ms FROM attempts WHERE url = $1 AND at >= $2 ORDER BY ms LIMIT 1 OFFSET $3',
  lastFailure: `
  SELECT at, status, error, response_body FROM attempts
  WHERE url = $1 AND at >= $2 AND (status IS NULL OR status NOT BETWEEN 200 AND 299)
  ORDER BY at DESC, id DESC LIMIT 1`,
  // One query per status, so that each reads its own partial index (deliveries_due, deliveries_failed):
  // a status in a list (IN, = ANY) matches neither predicate and reads the whole table, delivered
  // history included, at every /metrics scrape.
  backlog: `
  SELECT source, 'failed' AS status, count(*) AS count, min(created_at) AS "oldestCreatedAt" FROM queue
  WHERE status = 'failed' GROUP BY source
  UNION ALL
  SELECT source, 'pending', sum(n)::bigint, min(oldest) FROM (
    SELECT source, count(*) AS n, min(created_at) AS oldest FROM queue WHERE status = 'pending' GROUP BY source
    UNION ALL
    -- What blocks hold (./delivery-blocks.ts): pending too.
    SELECT source, sum(holds), min(created_at) FROM delivery_blocks GROUP BY source) p
  GROUP BY source
  ORDER BY source, status`,
  // Settled deliveries that no dropped day took (./partitions.ts: those of the kept partition,
  // outcomes recorded after their day, the part of a day already past the cut-off), oldest
  // first, skipping rows being written at this instant; their messages and attempts go with them.
  // Those delivered at their first attempt have no outcome row (./first-attempt-delivered.ts):
  // a message with neither an outcome nor a queue row goes by its attempt's time, at most $2 of them,
  // read only in the day before the cut-off (an older day is dropped whole, and the dead letters
  // kept from it are never read again by each sweep).
  prune: `
  WITH gone AS (
    DELETE FROM outcomes WHERE (id, created_at) IN (
      SELECT id, created_at FROM outcomes WHERE settled_at < $1
      ORDER BY settled_at LIMIT $2 FOR UPDATE SKIP LOCKED)
    RETURNING id, created_at
  ), messages_gone AS (
    DELETE FROM messages m USING gone WHERE m.id = gone.id AND m.created_at = gone.created_at
  ), delivered_at_once AS (
    DELETE FROM messages m WHERE (m.id, m.created_at) IN (
      SELECT x.id, x.created_at FROM messages x
      WHERE x.created_at < $1 AND x.created_at >= $1::bigint - ${DAY_MS} AND ${SETTLED_AT_ONCE_BEFORE('x', '$1')}
      LIMIT $2 FOR UPDATE SKIP LOCKED)
    RETURNING m.id
  ), attempts_gone AS (
    DELETE FROM attempts WHERE delivery_id IN (SELECT id FROM gone UNION ALL SELECT id FROM delivered_at_once)
  )
  SELECT (SELECT count(*) FROM gone) + (SELECT count(*) FROM delivered_at_once) AS count`,

  // Audiences.
  members: 'SELECT user_id FROM audience_members WHERE source = $1 AND audience = $2',
  addMembers: 'INSERT INTO audience_members (source, audience, user_id) SELECT $1, $2, unnest($3::text[])',
  removeMembers: 'DELETE FROM audience_members WHERE source = $1 AND audience = $2 AND user_id = ANY($3::text[])',

  // Circuits.
  circuits: 'SELECT * FROM circuits WHERE url = ANY($1::text[])',
  // Counts failures; the closed circuit whose run reaches the threshold opens. In SET, every column
  // read is the row as it was, so each CASE judges the same old state. $1 url, $2 failures,
  // $3 threshold, $4 now, $5 firstProbeAt, $6 notBefore, $7 error.
  failCircuit: `
  INSERT INTO circuits AS c (url, state, failures, probes, opened_at, next_probe_at, last_error, updated_at)
  VALUES ($1::text, CASE WHEN $2::int >= $3::int THEN 'open' ELSE 'closed' END, $2::int, 0,
    CASE WHEN $2::int >= $3::int THEN $4::bigint END, CASE WHEN $2::int >= $3::int THEN $5::bigint END,
    $7::text, $4::bigint)
  ON CONFLICT (url) DO UPDATE SET
    state = CASE WHEN c.state = 'closed' AND c.failures + $2::int >= $3::int THEN 'open' ELSE c.state END,
    opened_at = CASE WHEN c.state = 'closed' AND c.failures + $2::int >= $3::int THEN $4::bigint ELSE c.opened_at END,
    next_probe_at = CASE
      WHEN c.state = 'paused' THEN NULL
      WHEN c.state <> 'closed' THEN greatest(c.next_probe_at, $6::bigint)
      WHEN c.failures + $2::int >= $3::int THEN $5::bigint
    END,
    failures = c.failures + $2::int,
    last_error = $7::text,
    updated_at = $4::bigint
  RETURNING *`,
  // The row goes and, if it was open, the routes' deliveries are due now. A data-modifying CTE's
  // RETURNING is what the rest of the statement sees. $1 url, $2 now, $3 sources, $4 destinations.
  succeed: `
  WITH gone AS (DELETE FROM circuits WHERE url = $1::text AND state <> 'paused' RETURNING state),
  woken AS (
    UPDATE queue SET next_attempt_at = $2::bigint, updated_at = $2::bigint
    WHERE status = 'pending' AND next_attempt_at > $2::bigint
      AND (source, destination) IN (SELECT * FROM unnest($3::text[], $4::text[]))
      AND EXISTS (SELECT 1 FROM gone WHERE state <> 'closed')
    RETURNING 1)
  SELECT (SELECT state FROM gone) AS state, (SELECT count(*) FROM woken)::int AS woken,
    EXISTS (SELECT 1 FROM circuits WHERE url = $1::text AND state = 'paused') AS paused`,
  takeProbe: `
  UPDATE circuits SET state = 'half-open', probe_owner = $2::text, probe_lease_until = $4::bigint, updated_at = $3::bigint
  WHERE url = $1::text AND state IN ('open', 'half-open') AND next_probe_at <= $3::bigint
    AND (probe_lease_until IS NULL OR probe_lease_until <= $3::bigint)
  RETURNING *`,
  failProbe: `
  UPDATE circuits SET state = 'open', probes = probes + 1, failures = failures + 1, next_probe_at = $3::bigint,
    probe_owner = NULL, probe_lease_until = NULL, last_error = $4::text, updated_at = $5::bigint
  WHERE url = $1::text AND probe_owner = $2::text
  RETURNING *`,
  returnProbe: `
  UPDATE circuits SET state = 'open', next_probe_at = $3::bigint, probe_owner = NULL, probe_lease_until = NULL,
    updated_at = $4::bigint
  WHERE url = $1::text AND probe_owner = $2::text
  RETURNING *`,
  renewProbes: `
  UPDATE circuits SET probe_lease_until = $3::bigint WHERE probe_owner = $1::text AND url = ANY($2::text[])`,
  // SKIP LOCKED: a delivery another relay is claiming right now is not waited for. Leases by the
  // database's clock, as claim: $1 sources, $2 destinations, $3 owner, $4 the lease's length (ms), $5 clock.
  claimProbe: `
  WITH ${CLOCK('$5')}
  UPDATE queue SET lease_until = clock.now + $4::bigint, lease_owner = $3::text
  FROM clock
  WHERE id = (
    SELECT id FROM queue q
    WHERE status = 'pending' AND (source, destination) IN (SELECT * FROM unnest($1::text[], $2::text[]))
      AND replay_of IS NULL AND (lease_until IS NULL OR lease_until <= ${NOW}) AND ${orderFree('queue', 'q')}
    ORDER BY next_attempt_at, id LIMIT 1
    FOR UPDATE SKIP LOCKED)
  RETURNING id, source, destination, ${MESSAGE_OF('queue')} AS message, attempts, first_attempt_at, clock.now AS clock_now`,
  // Behind paused circuits only, the window is not cut short and the wait is noted (paused_at): the
  // next claim gives that time back to the window.
  // $1 ids, $2 owner, $3 urls, $4 now, $5 until, $6 window, $7 error.
  //
  // FOR SHARE: an operator's resume (or a closing circuit) deleting one of these rows waits for
  // this statement to commit, then wakes what it parked; a delete that came first is seen here
  // (the row is gone), so nothing is parked behind a circuit that is no longer open. Without it, a
  // park whose snapshot predates a resume parked its deliveries for PARK_RECHECK_MS after it.
  park: `
  WITH down AS (
    SELECT state FROM circuits WHERE url = ANY($3::text[]) AND state <> 'closed' FOR SHARE),
  held AS (SELECT count(*) AS down, count(*) FILTER (WHERE state = 'paused') AS paused FROM down)
  UPDATE queue SET
    next_attempt_at = CASE WHEN held.paused = cardinality($3::text[]) THEN $5::bigint
      ELSE least($5::bigint, coalesce(first_attempt_at, $4::bigint) + $6::bigint) END,
    paused_at = CASE WHEN held.paused = cardinality($3::text[]) THEN $4::bigint END,
    first_attempt_at = coalesce(first_attempt_at, $4::bigint), last_error = $7::text, updated_at = $4::bigint,
    lease_until = NULL, lease_owner = NULL
  FROM held
  WHERE id = ANY($1::bigint[]) AND lease_owner = $2::text AND status = 'pending' AND held.down = cardinality($3::text[])
  RETURNING id`,
  // An operator's pause: whatever the circuit was, paused; a probe held is void (its holder's writes
  // no longer match). $1 url, $2 now.
  pauseCircuit: `
  INSERT INTO circuits AS c (url, state, failures, probes, paused_at, updated_at)
  VALUES ($1::text, 'paused', 0, 0, $2::bigint, $2::bigint)
  ON CONFLICT (url) DO UPDATE SET state = 'paused', paused_at = coalesce(c.paused_at, $2::bigint), next_probe_at = NULL,
    probe_owner = NULL, probe_lease_until = NULL, updated_at = $2::bigint
  RETURNING *`,
  // The pause ends: the row goes (closed); wake then makes the routes' deliveries due, in a
  // statement of its own, so that it sees what a park holding the row (FOR SHARE) parked before
  // the delete could go on. $1 url.
  resumeCircuit: `DELETE FROM circuits WHERE url = $1::text AND state = 'paused' RETURNING state`,
  // $1 now, $2 sources, $3 destinations.
  wake: `
  WITH woken AS (
    UPDATE queue SET next_attempt_at = $1::bigint, updated_at = $1::bigint
    WHERE status = 'pending' AND next_attempt_at > $1::bigint
      AND (source, destination) IN (SELECT * FROM unnest($2::text[], $3::text[]))
    RETURNING 1)
  SELECT count(*)::int AS woken FROM woken`,

  // PostgreSQL only: relays syncing the same audience at once take turns (SQLite has one writer).
  lockAudience: 'SELECT pg_advisory_xact_lock(hashtextextended($1, 0))',
  // PostgreSQL only: the database's clock, epoch ms with fractions, for a relay's offset to it.
  databaseNow: 'SELECT (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now',
} as const

/** The statements only PostgreSQL has (see the comment above them), left out when the dialects are compared. */
export const POSTGRES_ONLY: readonly (keyof typeof POSTGRES_STATEMENTS)[] = [
  'lockAudience',
  'databaseNow',
  // SQLite's enqueue writes every row's ordering key (NULL or not) in one statement.
  'enqueueOrdered',
]

/** A statement's name. */
export type PostgresStatement = keyof typeof POSTGRES_STATEMENTS
