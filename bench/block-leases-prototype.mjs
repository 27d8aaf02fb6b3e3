// Range leases without a cursor (docs/postgres.md, "Range leases: blocks, not a cursor"), as
// prototype SQL over the store's schema, measured by bench/pg-range-leases.mjs beside the store and
// the cursor prototype (./range-ingest-prototype.mjs). A cursor must stop below the snapshot's
// xmin, so one transaction left open anywhere on the server stops every claim; here ingest writes,
// in its own transaction, one row per block of a route's new deliveries, and the claim leases
// blocks as it leases queue rows today (SKIP LOCKED, a lease on the database's clock). No block
// row is ever visible before its messages are.
//
// - Delivery ids come in aligned blocks: the sequence steps by BLOCK_SPAN, a block takes one value
//   and numbers up to BLOCK_SIZE deliveries of one route from it, so any id names its block
//   (id - id % BLOCK_SPAN) without a look-up.
// - A block row counts the deliveries it still holds: record takes its outcomes off, and the row
//   goes with the last one. A delivery that fails at its first attempt would get its queue row
//   then (not measured here: every delivery succeeds).
// - A block leased before (its relay died) is read again skipping what has a request or a queue
//   or outcome row; a block's first claim reads its messages only.
import { importSource } from './load-source.mjs'

const { POSTGRES_ENQUEUE_FUNCTION2_STEP } = await importSource(
  `export { POSTGRES_ENQUEUE_FUNCTION2_STEP } from './src/relay/store/postgres/enqueue-function2'`,
)

/** The sequence's step: a block's ids are its first and the next BLOCK_SIZE - 1. */
export const BLOCK_SPAN = 1024
/** At most this many deliveries of one route in a block: a claim leases whole blocks. */
export const BLOCK_SIZE = 128

// The store's function up to its numbering of new deliveries (the locks and the duplicate look-up,
// unchanged); the rest is the prototype's.
const NUMBERING = "), fresh AS (\n      SELECT nextval('delivery_ids') AS id, picked.* FROM ("
const at = POSTGRES_ENQUEUE_FUNCTION2_STEP.indexOf(NUMBERING)
if (at < 0 || !POSTGRES_ENQUEUE_FUNCTION2_STEP.includes('INSERT INTO queue'))
  throw new Error(
    "the store's enqueue function changed its shape: mend the prototype (bench/block-leases-prototype.mjs)",
  )
const PICKED = /SELECT \* FROM given g\s+WHERE NOT EXISTS[\s\S]*?ORDER BY n\) picked/.exec(
  POSTGRES_ENQUEUE_FUNCTION2_STEP.slice(at),
)
if (PICKED === null) throw new Error('the enqueue function has no picked rows: mend the prototype')

export const BLOCK_INGEST_PROTOTYPE = `
  ALTER SEQUENCE delivery_ids INCREMENT BY ${BLOCK_SPAN};
  SELECT setval('delivery_ids', ${BLOCK_SPAN}, false);
  CREATE TABLE delivery_blocks (
    first_id    bigint  PRIMARY KEY,
    source      text    NOT NULL,
    destination text    NOT NULL,
    created_at  bigint  NOT NULL,  -- its messages' (their partition)
    size        integer NOT NULL,
    holds       integer NOT NULL,  -- deliveries not yet recorded
    claims      integer NOT NULL DEFAULT 0,
    lease_until bigint,
    lease_owner text
  ) WITH (fillfactor = 70, autovacuum_vacuum_scale_factor = 0.01);
  CREATE INDEX delivery_blocks_free ON delivery_blocks (source, first_id);
  ${POSTGRES_ENQUEUE_FUNCTION2_STEP.slice(0, at)}), picked AS (
      SELECT (row_number() OVER (PARTITION BY g.s, g.d ORDER BY g.n) - 1) AS r, g.* FROM (
        ${PICKED[0].replace(/\) picked$/, ') g')}
    ), blocks AS MATERIALIZED (
      SELECT s, d, r / ${BLOCK_SIZE} AS chunk, nextval('delivery_ids') AS first_id, count(*)::int AS size
      FROM picked GROUP BY s, d, r / ${BLOCK_SIZE}
    ), fresh AS (
      SELECT b.first_id + p.r % ${BLOCK_SIZE} AS id, p.* FROM picked p
      JOIN blocks b ON b.s = p.s AND b.d = p.d AND b.chunk = p.r / ${BLOCK_SIZE}
    ), inserted AS (
      INSERT INTO messages (
        id, created_at, source, destination, message_id, type, message, user_id, event)
      SELECT id, clock.now, s, d, m, t, j, user_id, event FROM fresh, clock
      RETURNING 1
    ), held AS (
      INSERT INTO delivery_blocks (first_id, source, destination, created_at, size, holds)
      SELECT first_id, s, d, clock.now, size, size FROM blocks, clock
    )
    SELECT count(*) INTO written FROM inserted;
    RETURN written;
  END $$;
`

/**
 * The claim: source `$1`'s oldest blocks no live lease holds, up to `$2` deliveries' worth (whole
 * blocks), leased to `$3` for `$4` ms; answers their deliveries as the store's claim does.
 */
export const BLOCK_CLAIM = `
  WITH clock AS (SELECT (extract(epoch FROM now()) * 1000)::bigint AS now),
  picked AS (
    SELECT first_id FROM delivery_blocks
    WHERE source = $1 AND (lease_until IS NULL OR lease_until <= (SELECT now FROM clock))
    ORDER BY source, first_id LIMIT greatest(1, $2::int / ${BLOCK_SIZE})
    FOR UPDATE SKIP LOCKED),
  leased AS (
    UPDATE delivery_blocks b SET lease_until = clock.now + $4::bigint, lease_owner = $3, claims = b.claims + 1
    FROM picked, clock WHERE b.first_id = picked.first_id
    RETURNING b.first_id, b.size, b.created_at, b.claims)
  SELECT m.id, m.created_at, m.destination, m.message FROM leased b
  JOIN messages m ON m.id >= b.first_id AND m.id < b.first_id + b.size AND m.created_at = b.created_at
  WHERE b.claims = 1 OR (
    NOT EXISTS (SELECT 1 FROM attempts a WHERE a.delivery_id = m.id AND a.created_at = m.created_at)
    AND NOT EXISTS (SELECT 1 FROM queue q WHERE q.id = m.id)
    AND NOT EXISTS (SELECT 1 FROM outcomes o WHERE o.id = m.id AND o.created_at = m.created_at))`

/**
 * The outcomes of delivered first attempts (`$1` ids, `$2` their created_at): each request
 * appended (as the store's record does), and each block's count taken down by its outcomes, the
 * row gone with its last; `$3` the lease's owner.
 */
export const BLOCK_RECORD = `
  WITH clock AS (SELECT (extract(epoch FROM now()) * 1000)::bigint AS now),
  counted AS (
    SELECT id - id % ${BLOCK_SPAN} AS first_id, count(*)::int AS n FROM unnest($1::bigint[]) AS id GROUP BY 1),
  gone AS (
    DELETE FROM delivery_blocks b USING counted c
    WHERE b.first_id = c.first_id AND b.lease_owner = $3 AND b.holds <= c.n),
  fewer AS (
    UPDATE delivery_blocks b SET holds = b.holds - c.n FROM counted c
    WHERE b.first_id = c.first_id AND b.lease_owner = $3 AND b.holds > c.n)
  INSERT INTO attempts (delivery_id, at, url, status, ms, created_at)
  SELECT a.id, clock.now - 5, 'http://127.0.0.1:1/hook', 200, 5, a.created_at
  FROM unnest($1::bigint[], $2::bigint[]) AS a (id, created_at), clock`
