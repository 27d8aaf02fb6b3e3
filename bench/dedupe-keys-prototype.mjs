// The duplicate check in a table of its own, as built on the branch `message-keys` and not
// merged (docs/postgres.md, "The duplicate check in a table of its own: measured, not taken"):
// applied by `node bench/pg-enqueue.mjs --dedupe keys` over the store's schema, to measure it
// against the look-up in every retained day that the store runs. Its SQL is the branch's step,
// the history's keys filled first.
export const KEYS_PROTOTYPE = `
  CREATE OR REPLACE FUNCTION tracklet_message_key(source text, destination text, message_id text)
  RETURNS bytea LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    SELECT substring(sha256(textsend(
      length(source) || ':' || source || length(destination) || ':' || destination || message_id)) FOR 16)
  $$;

  CREATE TABLE IF NOT EXISTS message_keys (
    key        bytea  PRIMARY KEY,
    created_at bigint NOT NULL   -- its message's: retention drops the keys with the day
  );
  CREATE INDEX IF NOT EXISTS message_keys_time ON message_keys USING brin (created_at);


  CREATE OR REPLACE FUNCTION tracklet_enqueue(
    sources text[], destinations text[], message_ids text[], types text[], bodies text[],
    user_ids text[], events text[], clock_at bigint, order_keys text[]
  ) RETURNS bigint LANGUAGE plpgsql VOLATILE AS $$
  DECLARE
    clock_now bigint := coalesce(clock_at, (extract(epoch FROM now()) * 1000)::bigint);
    keys bytea[] := ARRAY(
      SELECT tracklet_message_key(s, d, m) FROM unnest(sources, destinations, message_ids) AS u (s, d, m));
    taken bytea[];
    written_before bytea[];
    written bigint;
  BEGIN
    -- Each key once (the batch's first copy of a delivery), in one order, so that two batches
    -- never wait on each other's keys.
    WITH claimed AS (
      INSERT INTO message_keys (key, created_at)
      SELECT DISTINCT k, clock_now FROM unnest(keys) AS k ORDER BY 1
      ON CONFLICT DO NOTHING
      RETURNING key
    )
    SELECT coalesce(array_agg(key), '{}') INTO taken FROM claimed;
    -- Keys another delivery holds: skipped only where its message is there (a fresh snapshot).
    IF cardinality(taken) < (SELECT count(DISTINCT k) FROM unnest(keys) AS k) THEN
      SELECT coalesce(array_agg(tracklet_message_key(x.source, x.destination, x.message_id)), '{}')
      INTO written_before FROM messages x
      WHERE md5(x.message_id)::uuid = ANY (ARRAY(
          SELECT md5(m)::uuid FROM unnest(message_ids, keys) AS u (m, k) WHERE k <> ALL (taken)))
        AND x.replay_id IS NULL
        AND tracklet_message_key(x.source, x.destination, x.message_id) <> ALL (taken);
      -- A key whose message is gone is taken again by the one written under it: its time is now
      -- the new message's, so that retention keeps it as long as the message.
      UPDATE message_keys SET created_at = clock_now
      WHERE key = ANY (keys) AND key <> ALL (taken) AND key <> ALL (written_before);
    ELSE
      written_before := '{}';
    END IF;
    WITH given AS (
      SELECT * FROM unnest(sources, destinations, message_ids, types, bodies, user_ids, events, order_keys, keys)
        WITH ORDINALITY AS u (s, d, m, t, j, user_id, event, order_key, k, n)
    ), fresh AS (
      SELECT nextval('delivery_ids') AS id, picked.* FROM (
        SELECT * FROM given g
        WHERE g.k <> ALL (written_before)
          AND NOT EXISTS (SELECT 1 FROM given e WHERE e.k = g.k AND e.n < g.n)
        ORDER BY n) picked
    ), inserted AS (
      INSERT INTO messages (id, created_at, source, destination, message_id, type, message, user_id, event)
      SELECT id, clock_now, s, d, m, t, j, user_id, event FROM fresh
    )
    INSERT INTO queue
      (id, created_at, source, destination, status, next_attempt_at, updated_at, order_key)
    SELECT id, clock_now, s, d, 'pending', clock_now, clock_now, order_key FROM fresh;
    GET DIAGNOSTICS written = ROW_COUNT;
    RETURN written;
  END $$;

  CREATE OR REPLACE FUNCTION tracklet_enqueue(
    sources text[], destinations text[], message_ids text[], types text[], bodies text[],
    user_ids text[], events text[], clock_at bigint
  ) RETURNS bigint LANGUAGE sql VOLATILE AS $$
    SELECT tracklet_enqueue(sources, destinations, message_ids, types, bodies, user_ids, events, clock_at,
      array_fill(NULL::text, ARRAY[cardinality(sources)]))
  $$;
  INSERT INTO message_keys (key, created_at)
  SELECT tracklet_message_key(source, destination, message_id), created_at FROM messages
  WHERE replay_id IS NULL ON CONFLICT DO NOTHING;
  ANALYZE message_keys;
`
