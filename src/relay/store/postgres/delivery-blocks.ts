import { ENQUEUE_FUNCTION } from './enqueue-function'
import { ATTEMPTED_AT, WRITES_OUTCOME } from './first-attempt-delivered'
import { ORDER_KEY_COLUMN } from '../ordering/order-hold'
import { VIEW_UPDATE_BODY } from './schema6'

// Leased blocks (docs/postgres.md, "Leased blocks"): a new delivery gets no queue row. Ingest
// writes, in the transaction that writes the messages, one row per block of up to BLOCK_SIZE new
// deliveries of one source, in the batch's order (the delivery log's). The claim leases blocks
// (SKIP LOCKED, a lease on the database's clock, as it leases queue rows), splitting the last one
// it takes to fit its limit; record takes each outcome off its block's count, the row going with
// the last. Only a delivery that must wait (a retry, a parked or held one, a dead letter) gets a
// queue row, written when its first attempt is recorded. A block is never visible before its
// messages, so, unlike a cursor over the messages, no transaction left open anywhere on the
// server holds delivery back.
//
// A delivery "held by its block": its block's row is live and it has no queue row, no outcome row
// and no request in the log. Paths that need a delivery's pending state as a row (release, park,
// the per-URL limits' hold, a probe, erasure, a source no longer configured, retention, an update
// through the view) first spill the blocks concerned into queue rows, lease and all (SPILL), and
// then run as they did: those paths are rare, the claim and record are the hot path.

/**
 * At most this many deliveries, of one source, in a block. The sequence of delivery ids steps by
 * as much: a block takes one value and numbers its deliveries from it, so a block's ids are its
 * own. A delivery written outside a block (a replay's copy, an ordered destination's) takes a
 * value of its own. A claim that wants fewer than a block holds splits it: the block's row keeps
 * the ids it leases, a new row takes the rest.
 */
export const BLOCK_SIZE = 128

/**
 * The row (SQL, for a LATERAL join) of the block that may hold delivery `id`: the one starting at
 * or nearest below it, within a block's span; it holds it if `id < first_id + size`.
 */
export const BLOCK_ROW_OF = (id: string) =>
  `(SELECT x.* FROM delivery_blocks x WHERE x.first_id <= ${id} AND x.first_id > ${id} - ${BLOCK_SIZE}
    ORDER BY x.first_id DESC LIMIT 1)`

/** The first id of the block holding delivery `id` (SQL), or null. */
export const BLOCK_OF = (id: string) =>
  `(SELECT x.first_id FROM ${BLOCK_ROW_OF(id)} x WHERE ${id} < x.first_id + x.size)`

/** The message rows of block `b` (SQL: a row with first_id, size, created_at), for a join's ON. */
export const IN_BLOCK = (m: string, b: string) =>
  `${m}.id >= ${b}.first_id AND ${m}.id < ${b}.first_id + ${b}.size AND ${m}.created_at = ${b}.created_at`

/** Whether message `m` of a live block was settled or queued since (its block no longer holds it). */
export const LEFT_BLOCK = (m: string) => `(
    EXISTS (SELECT 1 FROM attempts a WHERE a.delivery_id = ${m}.id AND a.created_at = ${m}.created_at)
    OR EXISTS (SELECT 1 FROM queue q WHERE q.id = ${m}.id)
    OR EXISTS (SELECT 1 FROM outcomes o WHERE o.id = ${m}.id AND o.created_at = ${m}.created_at))`

/**
 * The deliveries its block still holds, as (id, created_at, source, destination, block: its first
 * id): what the queue's pending rows are for the rest. Block ranges are disjoint, so ordered by
 * (block, id) they are in the ids' order, and a page can stop at the blocks it needs.
 */
export const HELD_BY_BLOCKS = `(
    SELECT h.*, b.first_id AS block FROM delivery_blocks b
    CROSS JOIN LATERAL (SELECT m.id, m.created_at, m.source, m.destination FROM messages m
      WHERE ${IN_BLOCK('m', 'b')} AND NOT ${LEFT_BLOCK('m')}) h)`

/**
 * Spills the blocks `where` (SQL over `b`, a delivery_blocks row) into queue rows: each delivery
 * the block still holds becomes a pending queue row with the block's lease, and the block goes.
 * One statement; `$1…` are the condition's. Whoever holds the lease goes on with queue rows.
 */
export const SPILL_BLOCKS = (where: string) => `
  WITH clock AS (SELECT (extract(epoch FROM now()) * 1000)::bigint AS now),
  spilled AS (DELETE FROM delivery_blocks b WHERE ${where} RETURNING b.*)
  INSERT INTO queue (id, created_at, source, destination, status, next_attempt_at, updated_at, lease_until, lease_owner)
  SELECT m.id, m.created_at, m.source, m.destination, 'pending', m.created_at, clock.now, s.lease_until, s.lease_owner
  FROM spilled s JOIN messages m ON ${IN_BLOCK('m', 's')}, clock
  WHERE NOT ${LEFT_BLOCK('m')}
  ON CONFLICT (id) DO NOTHING`

/** The spills the store's paths run, by what they concern. */
export const SPILL = {
  // The blocks of these delivery ids ($1).
  ofIds: SPILL_BLOCKS(`b.first_id = ANY (ARRAY(SELECT ${BLOCK_OF('i')} FROM unnest($1::bigint[]) AS i))`),
  // The blocks of sources $1 that no live lease holds by the clock $2 (null: the database's), a
  // probe's candidates (a relay holding one parks what it cannot send).
  freeOfSources: SPILL_BLOCKS(`b.source = ANY ($1::text[])
    AND (b.lease_until IS NULL OR b.lease_until <= coalesce($2::bigint, (extract(epoch FROM now()) * 1000)::bigint))`),
  // Every block of a source ($1).
  ofSource: SPILL_BLOCKS('b.source = $1'),
  // Every block of a source not among $1.
  ofOtherSources: SPILL_BLOCKS('NOT (b.source = ANY ($1::text[]))'),
  // Every block written before $1 (epoch ms, the store's clock).
  before: SPILL_BLOCKS('b.created_at < $1'),
  // The blocks of a user's ($1) messages.
  ofUser: SPILL_BLOCKS(`b.first_id IN (SELECT ${BLOCK_OF('m.id')} FROM messages m WHERE m.user_id = $1)`),
} as const

/**
 * The claim's CTEs after the queue's (`queued`, with `relaxed` and `clock` before it; `now`: the
 * clock's instant as SQL): blocks of source `$1`, oldest first, up to the limit `$3` that the
 * queue's rows left, leased to `$4` for `$5` ms. Their deliveries are in `held`.
 */
export const CLAIM_BLOCKS = (now: string) => `
  -- Then blocks (./delivery-blocks.ts), oldest first, up to the limit the queue's rows left; the
  -- last one split if it holds more (its row keeps the ids leased, a new row takes the rest). A
  -- block leased before (its relay stopped or died) gives only what it still holds (its count
  -- taken again), and goes if that is nothing.
  free AS (
    SELECT first_id, size, claims, created_at FROM delivery_blocks
    WHERE source = $1 AND (lease_until IS NULL OR lease_until <= ${now})
    ORDER BY source, first_id LIMIT $3::bigint
    FOR UPDATE SKIP LOCKED
  ), picked AS (
    SELECT f.*, least(f.size, room.n - f.ahead)::int AS take
    FROM (SELECT *, sum(size) OVER (ORDER BY first_id) - size AS ahead FROM free) f,
      (SELECT $3::bigint - (SELECT count(*) FROM queued) AS n) room
    WHERE f.ahead < room.n
  ), held AS MATERIALIZED (
    SELECT p.first_id, m.id, m.source, m.destination, m.message, m.created_at
    FROM picked p JOIN messages m ON m.id >= p.first_id AND m.id < p.first_id + p.take AND m.created_at = p.created_at
    WHERE p.claims = 0 OR NOT ${LEFT_BLOCK('m')}
  ), counted AS (
    SELECT p.first_id, p.take, p.claims, (SELECT count(*) FROM held WHERE held.first_id = p.first_id)::int AS n
    FROM picked p
  ), leased AS (
    UPDATE delivery_blocks b SET lease_until = clock.now + $5::bigint, lease_owner = $4, claims = b.claims + 1,
      size = c.take, holds = c.n
    FROM counted c, relaxed, clock WHERE b.first_id = c.first_id AND c.n > 0
  ), emptied AS (
    DELETE FROM delivery_blocks b USING counted c WHERE b.first_id = c.first_id AND c.n = 0
  ), rest AS (
    -- A block never claimed holds all of its ids; one claimed before is counted at its next claim
    -- (until then its count may be high, never low: a block goes only when it holds none).
    INSERT INTO delivery_blocks (first_id, source, created_at, size, holds, claims)
    SELECT p.first_id + p.take, $1, p.created_at, p.size - p.take, p.size - p.take, p.claims
    FROM picked p WHERE p.take < p.size
  )`

/**
 * Record's CTEs after the queue's (`outcome`, `relaxed` and `clock` before them; `requested`: the
 * ids of the statement's requests, as SQL): the outcomes of deliveries their blocks hold, in
 * `held`.
 */
export const RECORD_HELD = (requested: string) => `
  -- A delivery its block still holds (./delivery-blocks.ts): a first attempt. Settled, it writes an
  -- outcome row as one from the queue would; one that must wait gets its queue row now. Each
  -- block's count goes down by its outcomes, the row with the last. Only a block claimed twice
  -- (its relay's lease ran out) can have had an outcome already: looked for only then.
  held AS MATERIALIZED (
    SELECT outcome.*, 0 AS attempts, b.first_id, b.created_at
    FROM outcome JOIN LATERAL ${BLOCK_ROW_OF('outcome.id')} b ON outcome.id < b.first_id + b.size
    WHERE NOT EXISTS (SELECT 1 FROM queue q WHERE q.id = outcome.id) AND (b.claims = 1 OR (
      NOT EXISTS (SELECT 1 FROM attempts a WHERE a.delivery_id = outcome.id AND a.created_at = b.created_at)
      AND NOT EXISTS (SELECT 1 FROM outcomes o WHERE o.id = outcome.id AND o.created_at = b.created_at)))
  ), held_settled AS (
    INSERT INTO outcomes (id, created_at, status, attempts, first_attempt_at, last_error, settled_at)
    SELECT held.id, held.created_at, held.status, 1, clock.now - held.ago, held.error, clock.now
    FROM held, clock
    WHERE held.status IN ('delivered', 'filtered') AND ${WRITES_OUTCOME('held', requested)}
  ), held_waiting AS (
    INSERT INTO queue (id, created_at, source, destination, status, attempts, first_attempt_at, next_attempt_at,
      last_error, updated_at)
    SELECT held.id, held.created_at, m.source, m.destination, held.status, 1, clock.now - held.ago,
      clock.now + held.due_in, held.error, clock.now
    FROM held JOIN messages m ON m.id = held.id AND m.created_at = held.created_at, relaxed, clock
    WHERE held.status IN ('pending', 'failed')
    ON CONFLICT (id) DO NOTHING
  ), counted AS (
    SELECT first_id, count(*)::int AS n FROM held GROUP BY first_id
  ), emptied AS (
    DELETE FROM delivery_blocks b USING counted WHERE b.first_id = counted.first_id AND b.holds <= counted.n
  ), fewer AS (
    UPDATE delivery_blocks b SET holds = b.holds - counted.n FROM counted
    WHERE b.first_id = counted.first_id AND b.holds > counted.n
  )`

// The trigger that takes an update through the deliveries view (./schema6.ts), its block spilled
// first, so that the update finds the delivery's queue row.
const VIEW_UPDATE = `
  CREATE OR REPLACE FUNCTION deliveries_update() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    ${SPILL_BLOCKS(`b.first_id = ${BLOCK_OF('OLD.id')}`)};
${VIEW_UPDATE_BODY}    RETURN NEW;
  END $$;
`

// Ingest's two functions again, numbering new deliveries in spans of the sequence: the locks and
// the look-up of ./enqueue-function2.ts unchanged (relays take turns on a message as before). The
// eight-argument one cuts each source's new deliveries, in the batch's order, into blocks of at
// most BLOCK_SIZE, one value of the sequence each, and writes a block row for each; the
// nine-argument one (a batch with an ordered destination's delivery: ./ordering-schema.ts) numbers
// the batch's in the same spans and writes each a queue row with its ordering key.
function enqueueFunction(kind: 'blocks' | 'ordered'): string {
  const ordered = kind === 'ordered'
  const span = ordered ? '' : 'PARTITION BY g.s '
  const spanKey = ordered ? '' : 's, '
  const written = ordered
    ? `INSERT INTO queue (id, created_at, source, destination, status, next_attempt_at, updated_at, ${ORDER_KEY_COLUMN})
      SELECT id, clock.now, s, d, 'pending', clock.now, clock.now, order_key FROM fresh, clock`
    : `INSERT INTO delivery_blocks (first_id, source, created_at, size, holds)
      SELECT first_id, s, clock.now, size, size FROM spans, clock`
  return `
  CREATE OR REPLACE FUNCTION ${ENQUEUE_FUNCTION}(
    sources text[], destinations text[], message_ids text[], types text[], bodies text[],
    user_ids text[], events text[], clock_at bigint${ordered ? ', order_keys text[]' : ''}
  ) RETURNS bigint LANGUAGE plpgsql VOLATILE AS $$
  DECLARE
    keys uuid[] := ARRAY(SELECT md5(m)::uuid FROM unnest(message_ids) AS m);
    written bigint;
  BEGIN
    PERFORM count(pg_advisory_xact_lock(k)) FROM (
      SELECT DISTINCT uuid_hash_extended(k, 28) AS k FROM unnest(keys) AS k ORDER BY 1) locks;
    WITH clock AS (
      SELECT coalesce(clock_at, (extract(epoch FROM now()) * 1000)::bigint) AS now
    ), given AS MATERIALIZED (
      SELECT * FROM unnest(sources, destinations, message_ids, types, bodies, user_ids, events${ordered ? ', order_keys' : ''})
        WITH ORDINALITY AS u (s, d, m, t, j, user_id, event, ${ordered ? 'order_key, ' : ''}n)
    ), found AS MATERIALIZED (
      SELECT x.message_id, x.source, x.destination FROM messages x
      WHERE md5(x.message_id)::uuid = ANY (keys) AND x.replay_id IS NULL
    ), picked AS (
      SELECT (row_number() OVER (${span}ORDER BY g.n) - 1) AS r, g.* FROM given g
      WHERE NOT EXISTS (
          SELECT 1 FROM found f WHERE f.message_id = g.m AND f.source = g.s AND f.destination = g.d)
        AND NOT EXISTS (
          SELECT 1 FROM given e WHERE e.m = g.m AND e.s = g.s AND e.d = g.d AND e.n < g.n)
    ), spans AS MATERIALIZED (
      -- Numbered in the order of each span's first delivery in the batch: the log's order.
      SELECT c.*, nextval('delivery_ids') AS first_id FROM (
        SELECT ${spanKey}r / ${BLOCK_SIZE} AS chunk, count(*)::int AS size
        FROM picked GROUP BY ${spanKey}r / ${BLOCK_SIZE} ORDER BY min(n)) c
    ), fresh AS (
      SELECT b.first_id + p.r % ${BLOCK_SIZE} AS id, p.* FROM picked p
      JOIN spans b ON ${ordered ? '' : 'b.s = p.s AND '}b.chunk = p.r / ${BLOCK_SIZE}
    ), inserted AS (
      INSERT INTO messages (id, created_at, source, destination, message_id, type, message, user_id, event)
      SELECT id, clock.now, s, d, m, t, j, user_id, event FROM fresh, clock
      RETURNING 1
    ), rows AS (
      ${written}
    )
    SELECT count(*) INTO written FROM inserted;
    RETURN written;
  END $$;`
}

// The view's row (m; q and o its queue and outcome rows): its block's lease, when neither is there.
const BLOCK_LEASE = (column: string) =>
  `CASE WHEN q.id IS NULL AND o.id IS NULL THEN (SELECT b.${column} FROM ${BLOCK_ROW_OF('m.id')} b
    WHERE m.id < b.first_id + b.size) END`

// Whether the view's row, with neither a queue nor an outcome row, is held by its block (no
// request yet, its block live), read only then: a delivered one is known by its request first.
const HELD = `(${ATTEMPTED_AT('m')} IS NULL AND ${BLOCK_OF('m.id')} IS NOT NULL)`

/**
 * The PostgreSQL step: the ids' sequence in steps of BLOCK_SIZE (its next value past every id
 * given so far), the blocks' table, ingest's functions numbering in spans (the eight-argument one
 * writing blocks instead of queue rows), and the deliveries view showing a delivery its block
 * holds as pending. Online: nothing is rewritten.
 */
export const POSTGRES_DELIVERY_BLOCKS_STEP = `
  ALTER SEQUENCE delivery_ids INCREMENT BY ${BLOCK_SIZE};
  SELECT setval('delivery_ids', (SELECT last_value + 1 FROM delivery_ids), false);
  CREATE TABLE delivery_blocks (
    first_id    bigint  PRIMARY KEY,  -- its deliveries' ids: first_id to first_id + size - 1
    source      text    NOT NULL,
    created_at  bigint  NOT NULL,     -- its messages' (the partition they are in)
    size        integer NOT NULL,
    holds       integer NOT NULL,     -- how many it still holds (no outcome recorded)
    claims      integer NOT NULL DEFAULT 0,
    lease_until bigint,               -- epoch ms, the database's clock
    lease_owner text
  ) WITH (fillfactor = 70, autovacuum_vacuum_scale_factor = 0.01, autovacuum_analyze_scale_factor = 0.02);
  CREATE INDEX delivery_blocks_source ON delivery_blocks (source, first_id);

  ${enqueueFunction('blocks')}
  ${enqueueFunction('ordered')}

  ${VIEW_UPDATE}

  CREATE OR REPLACE VIEW deliveries AS
  SELECT m.id, m.source, m.destination, m.message_id, m.type, m.message,
    coalesce(q.status, o.status, CASE WHEN ${HELD} THEN 'pending' ELSE 'delivered' END) AS status,
    coalesce(q.attempts, o.attempts, CASE WHEN ${HELD} THEN 0 ELSE 1 END) AS attempts,
    coalesce(q.first_attempt_at, o.first_attempt_at, ${ATTEMPTED_AT('m')}) AS first_attempt_at,
    coalesce(q.next_attempt_at, o.settled_at, ${ATTEMPTED_AT('m')}, m.created_at) AS next_attempt_at,
    coalesce(q.last_error, o.last_error) AS last_error,
    m.created_at,
    coalesce(q.updated_at, o.settled_at, ${ATTEMPTED_AT('m')}, m.created_at) AS updated_at,
    coalesce(q.lease_until, ${BLOCK_LEASE('lease_until')}) AS lease_until,
    coalesce(q.lease_owner, ${BLOCK_LEASE('lease_owner')}) AS lease_owner,
    m.user_id, m.event, q.paused_at,
    m.replay_of, m.replay_id, m.erased_at
  FROM messages m
  LEFT JOIN queue q ON q.id = m.id
  LEFT JOIN outcomes o ON o.id = m.id AND o.created_at = m.created_at;
`
