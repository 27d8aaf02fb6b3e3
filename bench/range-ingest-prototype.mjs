// Ingest as range leases would write it (docs/postgres.md, "Range leases: measured, not built"),
// applied by `node bench/pg-enqueue.mjs --queue-row none` and bench/pg-range-leases.mjs over the
// store's schema, to measure what it would save before the layout is built: the store's enqueue
// function (the eight-argument one a batch with no ordered destination calls: the same locks and
// duplicate look-up) with no queue row, each message carrying its writer's transaction id and an
// index on (source, xid, id) for the safe cursor the claim reads (the layouts' "range leases,
// safe"). Below it, the prototype's claim and record.
import { importSource } from './load-source.mjs'

const { POSTGRES_ENQUEUE_FUNCTION2_STEP } = await importSource(
  `export { POSTGRES_ENQUEUE_FUNCTION2_STEP } from './src/relay/store/postgres/enqueue-function2'`,
)

// The store's function, its last statement (the queue rows) taken off: the messages' insert ends it.
const QUEUE_ROWS =
  /\), inserted AS \(\s*(INSERT INTO messages[\s\S]*?FROM fresh, clock)\s*\)\s*INSERT INTO queue[\s\S]*?FROM fresh, clock;/
if (!QUEUE_ROWS.test(POSTGRES_ENQUEUE_FUNCTION2_STEP))
  throw new Error(
    "the store's enqueue function changed its shape: mend the prototype (bench/range-ingest-prototype.mjs)",
  )

export const RANGE_INGEST_PROTOTYPE = `
  ALTER TABLE messages ADD COLUMN xid xid8 NOT NULL DEFAULT pg_current_xact_id();
  CREATE INDEX messages_cursor ON messages (source, xid, id);
  ${POSTGRES_ENQUEUE_FUNCTION2_STEP.replace(QUEUE_ROWS, ')\n    $1;')}
`

/**
 * Delivery as range leases would run it, over the schema above: a cursor per source and
 * destination, and one lease row per claimed range (the layouts' "range leases, safe").
 */
export const RANGE_DELIVERY_PROTOTYPE = `
  CREATE TABLE range_cursors (source text NOT NULL, destination text NOT NULL, through_xid xid8 NOT NULL,
    through_id bigint NOT NULL, PRIMARY KEY (source, destination));
  CREATE TABLE range_leases (source text NOT NULL, destination text NOT NULL, first_xid xid8 NOT NULL,
    first_id bigint NOT NULL, last_xid xid8 NOT NULL, last_id bigint NOT NULL, lease_until bigint NOT NULL,
    lease_owner text NOT NULL, PRIMARY KEY (source, destination, first_xid, first_id));
  -- A source's cursor is written when it is configured: the bench's one source.
  INSERT INTO range_cursors VALUES ('web', 'Webhooks', '0', 0);
`

/**
 * The claim: the next `$2` messages of source `$1` past its cursor (only those whose transactions
 * have all ended: below the snapshot's xmin), leased as one range to `$3` for `$4` ms; answers them
 * as the store's claim does (id, message and the range's first key, to record its end).
 */
export const RANGE_CLAIM = `
  WITH clock AS (SELECT (extract(epoch FROM now()) * 1000)::bigint AS now),
  cursor AS (
    SELECT through_xid, through_id FROM range_cursors WHERE source = $1 AND destination = 'Webhooks' FOR UPDATE),
  next AS MATERIALIZED (
    -- The cursor as a value (an InitPlan), not a join: each day's index is then read in its order
    -- and merged, and the scan stops at the limit, instead of sorting every message past it.
    SELECT m.id, m.xid, m.created_at, m.destination, m.message FROM messages m
    WHERE m.source = $1 AND (m.xid, m.id) > ((SELECT through_xid FROM cursor), (SELECT through_id FROM cursor))
      AND m.xid < pg_snapshot_xmin(pg_current_snapshot())
    ORDER BY m.source, m.xid, m.id LIMIT $2),
  span AS (
    SELECT (array_agg(xid ORDER BY xid, id))[1] AS first_xid, (array_agg(id ORDER BY xid, id))[1] AS first_id,
      (array_agg(xid ORDER BY xid DESC, id DESC))[1] AS last_xid, (array_agg(id ORDER BY xid DESC, id DESC))[1] AS last_id
    FROM next),
  leased AS (
    INSERT INTO range_leases SELECT $1, 'Webhooks', first_xid, first_id, last_xid, last_id, clock.now + $4::bigint, $3
    FROM span, clock WHERE first_id IS NOT NULL),
  moved AS (
    UPDATE range_cursors SET through_xid = span.last_xid, through_id = span.last_id FROM span
    WHERE span.last_id IS NOT NULL AND source = $1 AND destination = 'Webhooks')
  SELECT next.id, next.created_at, next.message, span.first_xid, span.first_id FROM next, span`

/**
 * The outcomes of delivered first attempts: each request appended (as the store's record does),
 * and the ranges whose every delivery is now recorded ($3, $4: their first keys) given up.
 */
export const RANGE_RECORD = `
  WITH clock AS (SELECT (extract(epoch FROM now()) * 1000)::bigint AS now),
  done AS (
    DELETE FROM range_leases l USING unnest($3::xid8[], $4::bigint[]) AS r (xid, id)
    WHERE l.source = 'web' AND l.destination = 'Webhooks' AND l.first_xid = r.xid AND l.first_id = r.id)
  INSERT INTO attempts (delivery_id, at, url, status, ms, created_at)
  SELECT a.id, clock.now - 5, 'http://127.0.0.1:1/hook', 200, 5, a.created_at
  FROM unnest($1::bigint[], $2::bigint[]) AS a (id, created_at), clock`
