// The per-URL limits' shared budget (docs/delivery-controls.md), one schema step of the PostgreSQL
// store: its two tables and the two functions that take from them, each one round trip. Inside a
// plpgsql function each statement sees what committed before it (READ COMMITTED), so the row lock
// taken first makes relays take turns per URL, and the count read after it is current.

/** The function that takes requests of a URL's rate. */
export const TAKE_TOKENS_FUNCTION = 'tracklet_take_tokens'
/** The function that takes a slot of a URL's requests in flight. */
export const TAKE_SLOT_FUNCTION = 'tracklet_take_slot'

/** The PostgreSQL step. Times are epoch ms by the database's clock unless a test passes one. */
export const POSTGRES_ENDPOINT_LIMITS_STEP = `
  CREATE TABLE IF NOT EXISTS endpoint_budgets (
    url        text             PRIMARY KEY,
    tat        double precision NOT NULL DEFAULT 0,
    held_until bigint           NOT NULL DEFAULT 0,
    rate_per_second double precision,  -- as configured, for the endpoints view (NULL: no rate)
    max_in_flight   integer            -- as configured, for the endpoints view (NULL: no such limit)
  );
  CREATE TABLE IF NOT EXISTS endpoint_slots (
    url         text    NOT NULL,
    owner       text    NOT NULL,
    held        integer NOT NULL,
    lease_until bigint  NOT NULL,
    PRIMARY KEY (url, owner)
  );
  CREATE OR REPLACE FUNCTION ${TAKE_TOKENS_FUNCTION}(
    target text, want integer, interval_ms double precision, burst_ms double precision, clock_at bigint
  ) RETURNS TABLE (granted integer, wait_ms bigint, held_ms bigint) LANGUAGE plpgsql VOLATILE AS $$
  DECLARE
    at double precision := coalesce(clock_at, extract(epoch FROM clock_timestamp()) * 1000);
    row endpoint_budgets%ROWTYPE;
    base double precision;
    room integer;
  BEGIN
    INSERT INTO endpoint_budgets (url) VALUES (target) ON CONFLICT (url) DO NOTHING;
    SELECT * INTO row FROM endpoint_budgets WHERE url = target FOR UPDATE;
    IF row.held_until > at THEN
      RETURN QUERY SELECT 0, ceil(row.held_until - at)::bigint, ceil(row.held_until - at)::bigint;
      RETURN;
    END IF;
    base := greatest(row.tat, at);
    room := least(want, floor((at + burst_ms - base) / interval_ms))::integer;
    IF room > 0 THEN
      UPDATE endpoint_budgets SET tat = base + room * interval_ms WHERE url = target;
      RETURN QUERY SELECT room, 0::bigint, 0::bigint;
    ELSE
      RETURN QUERY SELECT 0, greatest(1, ceil(base + interval_ms - burst_ms - at))::bigint, 0::bigint;
    END IF;
  END $$;
  CREATE OR REPLACE FUNCTION ${TAKE_SLOT_FUNCTION}(
    target text, taker text, most integer, want integer, lease_ms bigint, clock_at bigint
  ) RETURNS TABLE (taken integer, held_ms bigint) LANGUAGE plpgsql VOLATILE AS $$
  DECLARE
    at bigint := coalesce(clock_at, (extract(epoch FROM clock_timestamp()) * 1000)::bigint);
    until bigint;
    used integer;
    grant_count integer;
  BEGIN
    INSERT INTO endpoint_budgets (url) VALUES (target) ON CONFLICT (url) DO NOTHING;
    SELECT held_until INTO until FROM endpoint_budgets WHERE url = target FOR UPDATE;
    IF until > at THEN
      RETURN QUERY SELECT 0, until - at;
      RETURN;
    END IF;
    SELECT coalesce(sum(held), 0) INTO used FROM endpoint_slots WHERE url = target AND lease_until > at;
    grant_count := least(want, most - used);
    IF grant_count <= 0 THEN
      RETURN QUERY SELECT 0, 0::bigint;
      RETURN;
    END IF;
    INSERT INTO endpoint_slots AS s (url, owner, held, lease_until) VALUES (target, taker, grant_count, at + lease_ms)
    ON CONFLICT (url, owner) DO UPDATE
      SET held = CASE WHEN s.lease_until > at THEN s.held + grant_count ELSE grant_count END,
        lease_until = at + lease_ms;
    RETURN QUERY SELECT grant_count, 0::bigint;
  END $$;
`
