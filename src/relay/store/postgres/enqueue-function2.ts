import { ENQUEUE_FUNCTION } from './enqueue-function'

// Ingest's function again (./enqueue-function.ts says why a function), each message's key worked
// out once (docs/postgres.md, "Ingest's enqueue, profiled"). The function before hashed each
// message's route and id as JSON text for its lock (about 3 µs a message on the server), then took
// the md5 of the id for the look-up, then sorted the batch for a window that numbered copies.
// Here the md5 key is worked out once: the lock is a hash of that key (one lock per message id:
// two routes of one id share it, which only makes them take turns), the look-up reads the same
// array, and a copy given twice in the batch is found by a hash anti-join, not a sort.
//
// The lock key changes with this step. CREATE OR REPLACE swaps the function for every relay at
// the step's commit, so relays that call the function agree on it; a relay older than the
// function (its locks in a statement of its own) must not write beside a relay of this step.

/** The PostgreSQL step that replaces the function. */
export const POSTGRES_ENQUEUE_FUNCTION2_STEP = `
  CREATE OR REPLACE FUNCTION ${ENQUEUE_FUNCTION}(
    sources text[], destinations text[], message_ids text[], types text[], bodies text[],
    user_ids text[], events text[], clock_at bigint
  ) RETURNS bigint LANGUAGE plpgsql VOLATILE AS $$
  DECLARE
    keys uuid[] := ARRAY(SELECT md5(m)::uuid FROM unnest(message_ids) AS m);
    written bigint;
  BEGIN
    -- Relays writing the same new message take turns, taking the locks in one order so that two
    -- batches never wait on each other.
    PERFORM count(pg_advisory_xact_lock(k)) FROM (
      SELECT DISTINCT uuid_hash_extended(k, 28) AS k FROM unnest(keys) AS k ORDER BY 1) locks;
    -- A fresh snapshot: a message another relay committed while this one waited is seen. One
    -- already written (any partition, not a replay's copy) or given twice is skipped; each new
    -- delivery is a message row and a queue row, numbered in the batch's order, due at once by
    -- the database's clock.
    WITH clock AS (
      SELECT coalesce(clock_at, (extract(epoch FROM now()) * 1000)::bigint) AS now
    ), given AS MATERIALIZED (
      SELECT * FROM unnest(sources, destinations, message_ids, types, bodies, user_ids, events)
        WITH ORDINALITY AS u (s, d, m, t, j, user_id, event, n)
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
    INSERT INTO queue (id, created_at, source, destination, status, next_attempt_at, updated_at)
    SELECT id, clock.now, s, d, 'pending', clock.now, clock.now FROM fresh, clock;
    GET DIAGNOSTICS written = ROW_COUNT;
    RETURN written;
  END $$;
`
