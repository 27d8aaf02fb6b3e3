// Schema 6's requests log by day (docs/postgres.md, "Retention"): `attempts` partitioned by its
// delivery's day (created_at, the clock of messages and outcomes), so a day past retention drops
// its requests whole with its messages and outcomes (./partitions.ts), instead of deleting them
// one by one: a million deliveries' requests cost one DROP, not a million deletes.
//
// The table as it stands becomes the kept (DEFAULT) partition, as messages_kept holds what no day
// partition does: the requests written before this step (created_at 0: in no day, so pruned with
// their deliveries, row by row, as before), a relay of the previous version's (which does not
// write created_at), and those of a dropped day's pending and dead deliveries.
//
// - Identity columns cannot be attached as a partition (and PostgreSQL before 17 has none on a
//   partitioned table), so ids come from a sequence of their own, going on from the identity's.
// - The primary key gains created_at (a partitioned table's unique index must hold the partition
//   key). The relay builds it on the old table before the migration, without blocking writes
//   (./prepare-attempts.ts); the step then makes it the primary key. A database the step finds
//   without it (a start that skipped the preparation) has it built here, under the lock.

/** The sequence that numbers requests (the delivery log lists a delivery's requests by it). */
export const ATTEMPT_IDS = 'attempt_ids'

/** The kept partition's primary key, on (delivery id, id, created_at), built ahead of the step. */
export const ATTEMPTS_DAY_KEY = 'attempts_day_key'

/** The PostgreSQL step. */
export const POSTGRES_ATTEMPTS_BY_DAY_STEP = `
  CREATE SEQUENCE ${ATTEMPT_IDS};
  SELECT setval('${ATTEMPT_IDS}', nextval(pg_get_serial_sequence('attempts', 'id')), false);
  ALTER TABLE attempts ALTER COLUMN id DROP IDENTITY;
  ALTER TABLE attempts ADD COLUMN IF NOT EXISTS created_at bigint NOT NULL DEFAULT 0;
  -- The new key in place of the old (a table has one primary key): the one built ahead when it is
  -- there and whole, else built now.
  DO $$
  BEGIN
    IF EXISTS (SELECT 1 FROM pg_index WHERE indexrelid = to_regclass('${ATTEMPTS_DAY_KEY}') AND indisvalid) THEN
      ALTER TABLE attempts DROP CONSTRAINT attempts_pkey,
        ADD CONSTRAINT attempts_kept_pkey PRIMARY KEY USING INDEX ${ATTEMPTS_DAY_KEY};
    ELSE
      DROP INDEX IF EXISTS ${ATTEMPTS_DAY_KEY};
      ALTER TABLE attempts DROP CONSTRAINT attempts_pkey,
        ADD CONSTRAINT attempts_kept_pkey PRIMARY KEY (delivery_id, id, created_at);
    END IF;
  END $$;
  ALTER TABLE attempts RENAME TO attempts_kept;
  ALTER INDEX attempts_url RENAME TO attempts_kept_url;

  -- The columns in the old table's order: a dropped day's rows are copied back by SELECT *.
  CREATE TABLE attempts (
    id              bigint  NOT NULL DEFAULT nextval('${ATTEMPT_IDS}'),
    delivery_id     bigint  NOT NULL,
    at              bigint  NOT NULL,  -- epoch ms when the attempt started
    url             text    NOT NULL,
    status          integer,           -- the HTTP status, when there was an answer
    error           text,              -- why it failed, when it did
    ms              integer NOT NULL,  -- how long it took
    response_body   text,              -- the start of a failed request's answer
    request_headers text,              -- JSON, secrets hidden
    console         text,              -- what the destination's function printed (docs/functions.md)
    created_at      bigint  NOT NULL DEFAULT 0,  -- its delivery's (the partition key)
    PRIMARY KEY (delivery_id, id, created_at)
  ) PARTITION BY RANGE (created_at);
  ALTER SEQUENCE ${ATTEMPT_IDS} OWNED BY attempts.id;
  CREATE INDEX attempts_url ON attempts (url, at);
  -- The kept partition's keys serve the parent's (same columns): neither is built again.
  ALTER TABLE attempts ATTACH PARTITION attempts_kept DEFAULT;
  -- The days made already for messages get their requests' partition too.
  DO $$
  DECLARE day record;
  BEGIN
    FOR day IN SELECT c.relname AS name, pg_get_expr(c.relpartbound, c.oid) AS bound
      FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
      WHERE i.inhparent = 'messages'::regclass AND pg_get_expr(c.relpartbound, c.oid) <> 'DEFAULT'
    LOOP
      EXECUTE format('CREATE TABLE %I PARTITION OF attempts %s', replace(day.name, 'messages_', 'attempts_'), day.bound);
    END LOOP;
  END $$;
`
