import { ORDER_INDEX_COLUMNS, ORDER_KEY_COLUMN } from '../ordering/order-hold'
import { ENQUEUE_FUNCTION } from './enqueue-function'

// Ordered delivery per user (docs/delivery-controls.md, "Ordering") on PostgreSQL: a nullable key
// on the queue row (adding it rewrites nothing), its partial index (only ordered pending rows:
// empty, and free to keep, while no destination is ordered), and ingest's function again with the
// keys as one more array, after ./enqueue-function2.ts (its locks and look-up). The eight-argument
// function stays: enqueue calls it for a batch without an ordered destination's delivery.

/** The partial index of the ordering keys. */
export const ORDER_INDEX = 'queue_order'

/** The index's definition, after CREATE INDEX [CONCURRENTLY]. */
export const ORDER_INDEX_SQL = `${ORDER_INDEX} ON queue ${ORDER_INDEX_COLUMNS}`

/** The PostgreSQL step: the column, the index unless the preparation built it, the function. */
export const POSTGRES_ORDERING_STEP = `
  ALTER TABLE queue ADD COLUMN IF NOT EXISTS ${ORDER_KEY_COLUMN} text;
  DO $$
  BEGIN
    IF NOT EXISTS (
      SELECT 1 FROM pg_index WHERE indexrelid = to_regclass('${ORDER_INDEX}') AND indisvalid
    ) THEN
      DROP INDEX IF EXISTS ${ORDER_INDEX};
      CREATE INDEX ${ORDER_INDEX_SQL};
    END IF;
  END $$;
  CREATE OR REPLACE FUNCTION ${ENQUEUE_FUNCTION}(
    sources text[], destinations text[], message_ids text[], types text[], bodies text[],
    user_ids text[], events text[], clock_at bigint, order_keys text[]
  ) RETURNS bigint LANGUAGE plpgsql VOLATILE AS $$
  DECLARE
    keys uuid[] := ARRAY(SELECT md5(m)::uuid FROM unnest(message_ids) AS m);
    written bigint;
  BEGIN
    -- As the eight-argument version (./enqueue-function2.ts), the same locks and look-up, so that
    -- the two take turns on a message; each new delivery's queue row carries its ordering key.
    PERFORM count(pg_advisory_xact_lock(k)) FROM (
      SELECT DISTINCT uuid_hash_extended(k, 28) AS k FROM unnest(keys) AS k ORDER BY 1) locks;
    WITH clock AS (
      SELECT coalesce(clock_at, (extract(epoch FROM now()) * 1000)::bigint) AS now
    ), given AS MATERIALIZED (
      SELECT * FROM unnest(sources, destinations, message_ids, types, bodies, user_ids, events, order_keys)
        WITH ORDINALITY AS u (s, d, m, t, j, user_id, event, order_key, n)
    ), found AS MATERIALIZED (
      SELECT x.message_id, x.source, x.destination FROM messages x
      WHERE md5(x.message_id)::uuid = ANY (keys) AND x.replay_id IS NULL
    ), fresh AS (
      SELECT nextval('delivery_ids') AS id, picked.* FROM (
        SELECT * FROM given g
        WHERE NOT EXISTS (
            SELECT 1 FROM found f
            WHERE f.message_id = g.m AND f.source = g.s AND f.destination = g.d)
          AND NOT EXISTS (
            SELECT 1 FROM given e WHERE e.m = g.m AND e.s = g.s AND e.d = g.d AND e.n < g.n)
        ORDER BY n) picked
    ), inserted AS (
      INSERT INTO messages (
        id, created_at, source, destination, message_id, type, message, user_id, event)
      SELECT id, clock.now, s, d, m, t, j, user_id, event FROM fresh, clock
    )
    INSERT INTO queue
      (id, created_at, source, destination, status, next_attempt_at, updated_at, ${ORDER_KEY_COLUMN})
    SELECT id, clock.now, s, d, 'pending', clock.now, clock.now, order_key FROM fresh, clock;
    GET DIAGNOSTICS written = ROW_COUNT;
    RETURN written;
  END $$;
`
