// Ingest's write in one statement (docs/postgres.md, "Ingest in one statement"): a function that
// takes the messages' advisory locks, then looks for each message already written and inserts the
// rest. The store still wraps it in BEGIN and COMMIT (the COMMIT is where a synchronous standby's
// missing confirmation is heard): three round trips a batch, four before (the locks apart).
//
// Why a function and not one plain statement: a plain statement reads one snapshot, taken when it
// starts, so a lock it waits for mid-statement would let the other relay commit a row its look-up
// then cannot see. A VOLATILE PL/pgSQL function (the default) takes a fresh snapshot for each of
// its statements, so the look-up after the locks sees what the lock's holder committed.
//
// The lock key and the look-up are the ones relays of the previous step take in statements of
// their own (lockMessages, the enqueue CTE), so relays of both versions writing at once still
// take turns. A step that changes them must replace the function (CREATE OR REPLACE) in a step
// of its own: this one has shipped.
//
// ./enqueue-function2.ts is such a step: the function relays call now, each message's key worked
// out once. This text stays as the step shipped (a database at an older version runs it first).

/** The function's name; its arguments are enqueue's parameters, in their order. */
export const ENQUEUE_FUNCTION = 'tracklet_enqueue'

/** The PostgreSQL step that makes the function. */
export const POSTGRES_ENQUEUE_FUNCTION_STEP = `
  CREATE OR REPLACE FUNCTION ${ENQUEUE_FUNCTION}(
    sources text[], destinations text[], message_ids text[], types text[], bodies text[],
    user_ids text[], events text[], clock_at bigint
  ) RETURNS bigint LANGUAGE plpgsql VOLATILE AS $$
  DECLARE
    written bigint;
  BEGIN
    -- Relays writing the same new message take turns: one lock per message key, taken in one
    -- order so that two batches never wait on each other.
    PERFORM count(pg_advisory_xact_lock(k)) FROM (
      SELECT DISTINCT hashtextextended(json_build_array(s, d, m)::text, 28) AS k
      FROM unnest(sources, destinations, message_ids) AS u (s, d, m) ORDER BY 1) keys;
    -- A fresh snapshot: a message another relay committed while this one waited is seen. One
    -- already written (any partition, not a replay's copy) or given twice is skipped; each new
    -- delivery is a message row and a queue row, numbered in the batch's order, due at once by
    -- the database's clock. The look-up is one index scan per partition for the whole batch (its
    -- keys as one array), not one per message and partition.
    WITH clock AS (
      SELECT coalesce(clock_at, (extract(epoch FROM now()) * 1000)::bigint) AS now
    ), given AS (
      SELECT *, row_number() OVER (PARTITION BY m, s, d ORDER BY n) AS copy
      FROM unnest(sources, destinations, message_ids, types, bodies, user_ids, events)
        WITH ORDINALITY AS u (s, d, m, t, j, user_id, event, n)
    ), found AS MATERIALIZED (
      SELECT x.message_id, x.source, x.destination FROM messages x
      WHERE md5(x.message_id)::uuid = ANY (ARRAY(SELECT DISTINCT md5(m)::uuid FROM given))
        AND x.replay_id IS NULL
    ), fresh AS (
      SELECT nextval('delivery_ids') AS id, picked.* FROM (
        SELECT * FROM given
        WHERE copy = 1
          AND NOT EXISTS (SELECT 1 FROM found f WHERE f.message_id = m AND f.source = s AND f.destination = d)
        ORDER BY n) picked
    ), inserted AS (
      INSERT INTO messages (id, created_at, source, destination, message_id, type, message, user_id, event)
      SELECT id, clock.now, s, d, m, t, j, user_id, event FROM fresh, clock
    )
    INSERT INTO queue (id, created_at, source, destination, status, next_attempt_at, updated_at)
    SELECT id, clock.now, s, d, 'pending', clock.now, clock.now FROM fresh, clock;
    GET DIAGNOSTICS written = ROW_COUNT;
    RETURN written;
  END $$;
`
