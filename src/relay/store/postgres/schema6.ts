// Schema 6 on PostgreSQL (docs/postgres.md, "Schema 6"): each delivery's message written once,
// a narrow queue of what is pending or dead, outcomes appended, retention by dropping whole days.
//
// - messages: one row per delivery (its route, message id, JSON and search keys), never updated
//   but by erasure, partitioned by day of created_at (the store's clock, epoch ms). The day
//   partitions are made ahead by the relay (./partitions.ts); the DEFAULT partition keeps what no
//   day partition holds: rows written before the upgrade, days not made ahead, and the messages of
//   a dropped day that the queue still names (pending or dead, however old).
// - queue: one narrow row per delivery pending or dead, with its lease (on the database's clock),
//   attempts and due time. A delivery that settles leaves it (deleted, not updated into a wide row).
// - outcomes: one row per settled delivery (delivered or filtered), appended, partitioned as messages.
// - deliveries: a view joining the three, with schema 5's columns, for the delivery log's searches
//   and for tools that read the outbox; an update through it reaches the queue row (the only
//   mutable part), so a pending or dead delivery can still be adjusted by hand.
// - The duplicate check cannot be a unique index (a partitioned table's unique index must hold the
//   partition key): the store looks in (message_id, source, destination) across the partitions,
//   with two relays writing one new message id serialised by an advisory lock on its hash.

/** The key messages_key indexes, for a message id given as SQL (a column or a parameter). */
export const MESSAGE_KEY_OF = (messageId: string) => `md5(${messageId})::uuid`

/** The messages' DEFAULT partition: what no day partition holds (retention prunes it row by row). */
export const MESSAGES_KEPT = 'messages_kept'

/** The sequence that numbers deliveries (their ids, the delivery log's order). */
export const DELIVERY_IDS = 'delivery_ids'

/**
 * What an update through the deliveries view does (the trigger's body, ./delivery-blocks.ts makes
 * it again): reaches the queue row, or moves the delivery between the queue and the outcomes.
 */
export const VIEW_UPDATE_BODY = `    IF NEW.status IN ('pending', 'failed') THEN
      UPDATE queue SET status = NEW.status, attempts = NEW.attempts, first_attempt_at = NEW.first_attempt_at,
        next_attempt_at = NEW.next_attempt_at, last_error = NEW.last_error, updated_at = NEW.updated_at,
        lease_until = NEW.lease_until, lease_owner = NEW.lease_owner, paused_at = NEW.paused_at
      WHERE id = OLD.id;
      IF NOT FOUND THEN
        DELETE FROM outcomes WHERE id = OLD.id AND created_at = OLD.created_at;
        INSERT INTO queue (id, created_at, source, destination, status, attempts, first_attempt_at, next_attempt_at,
          last_error, updated_at, lease_until, lease_owner, paused_at, replay_of, replay_id)
        VALUES (OLD.id, OLD.created_at, OLD.source, OLD.destination, NEW.status, NEW.attempts, NEW.first_attempt_at,
          NEW.next_attempt_at, NEW.last_error, NEW.updated_at, NEW.lease_until, NEW.lease_owner, NEW.paused_at,
          OLD.replay_of, OLD.replay_id);
      END IF;
    ELSE
      DELETE FROM queue WHERE id = OLD.id;
      INSERT INTO outcomes (id, created_at, status, attempts, first_attempt_at, last_error, settled_at)
      VALUES (OLD.id, OLD.created_at, NEW.status, NEW.attempts, NEW.first_attempt_at, NEW.last_error, NEW.updated_at)
      ON CONFLICT (id, created_at) DO UPDATE SET status = EXCLUDED.status, attempts = EXCLUDED.attempts,
        first_attempt_at = EXCLUDED.first_attempt_at, last_error = EXCLUDED.last_error, settled_at = EXCLUDED.settled_at;
    END IF;
`

// The columns the view shows, schema 5's names: what every search and the rows' readers expect.
const VIEW = `
  CREATE VIEW deliveries AS
  SELECT m.id, m.source, m.destination, m.message_id, m.type, m.message,
    coalesce(q.status, o.status, 'delivered') AS status,
    coalesce(q.attempts, o.attempts, 0) AS attempts,
    coalesce(q.first_attempt_at, o.first_attempt_at) AS first_attempt_at,
    coalesce(q.next_attempt_at, o.settled_at, m.created_at) AS next_attempt_at,
    coalesce(q.last_error, o.last_error) AS last_error,
    m.created_at,
    coalesce(q.updated_at, o.settled_at, m.created_at) AS updated_at,
    q.lease_until, q.lease_owner, m.user_id, m.event, q.paused_at,
    m.replay_of, m.replay_id, m.erased_at
  FROM messages m
  LEFT JOIN queue q ON q.id = m.id
  LEFT JOIN outcomes o ON o.id = m.id AND o.created_at = m.created_at;

  -- An update through the view (by hand, or a tool's) reaches the queue row, or moves the delivery
  -- between the queue and the outcomes when its status crosses from pending or dead to settled.
  CREATE FUNCTION deliveries_update() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
${VIEW_UPDATE_BODY}    RETURN NEW;
  END $$;
  CREATE TRIGGER deliveries_update INSTEAD OF UPDATE ON deliveries FOR EACH ROW EXECUTE FUNCTION deliveries_update();
`

/**
 * Schema 6's tables beside schema 5's `deliveries`, made if missing: made by the online upgrade
 * (./upgrade6.ts) before the step, or by the step itself.
 */
export const SCHEMA6_TABLES = `
  CREATE SEQUENCE IF NOT EXISTS ${DELIVERY_IDS};
  -- The deliveries relays of schema 5 changed after the online copy began (./upgrade6.ts).
  CREATE TABLE IF NOT EXISTS schema6_changed (id bigint NOT NULL);
  CREATE TABLE IF NOT EXISTS messages (
    id          bigint NOT NULL,
    created_at  bigint NOT NULL,   -- epoch ms, the store's clock: the partition key
    source      text   NOT NULL,
    destination text   NOT NULL,
    message_id  text   NOT NULL,
    type        text   NOT NULL,
    message     text   NOT NULL,   -- the message's JSON, as accepted
    user_id     text,
    event       text,
    replay_of   bigint,            -- the original a replay's delivery re-sends
    replay_id   bigint,
    erased_at   bigint,
    PRIMARY KEY (id, created_at)
  ) PARTITION BY RANGE (created_at);
  CREATE TABLE IF NOT EXISTS ${MESSAGES_KEPT} PARTITION OF messages DEFAULT;
  -- The duplicate check (the store's look-up) and searches by message id: on a 16-byte key (the
  -- md5 of the message id, as uuid) rather than the id's text with the route's, a third of the size
  -- in every entry (docs/postgres.md, the layouts measured). Readers name MESSAGE_KEY_OF.
  CREATE INDEX IF NOT EXISTS messages_key ON messages ((md5(message_id)::uuid));
  CREATE INDEX IF NOT EXISTS messages_user ON messages (user_id, id) WHERE user_id IS NOT NULL;
  CREATE INDEX IF NOT EXISTS messages_replay ON messages (replay_id) WHERE replay_id IS NOT NULL;
  CREATE INDEX IF NOT EXISTS messages_time ON messages USING brin (created_at);

  CREATE TABLE IF NOT EXISTS queue (
    id               bigint  PRIMARY KEY,
    created_at       bigint  NOT NULL,  -- its message's (the partition it is in)
    source           text    NOT NULL,
    destination      text    NOT NULL,
    status           text    NOT NULL CHECK (status IN ('pending', 'failed')),
    attempts         integer NOT NULL DEFAULT 0,
    first_attempt_at bigint,
    next_attempt_at  bigint  NOT NULL,
    last_error       text,
    updated_at       bigint  NOT NULL,
    lease_until      bigint,            -- epoch ms, the database's clock
    lease_owner      text,
    paused_at        bigint,
    replay_of        bigint,
    replay_id        bigint
  ) WITH (fillfactor = 70, autovacuum_vacuum_scale_factor = 0.01, autovacuum_analyze_scale_factor = 0.02);
  CREATE INDEX IF NOT EXISTS queue_due ON queue (source, next_attempt_at, id) WHERE status = 'pending' AND replay_of IS NULL;
  CREATE INDEX IF NOT EXISTS queue_replay_due ON queue (source, next_attempt_at) WHERE status = 'pending' AND replay_of IS NOT NULL;
  CREATE INDEX IF NOT EXISTS queue_replay ON queue (replay_id) WHERE replay_id IS NOT NULL;
  CREATE INDEX IF NOT EXISTS queue_failed ON queue (id) WHERE status = 'failed';

  CREATE TABLE IF NOT EXISTS outcomes (
    id               bigint  NOT NULL,
    created_at       bigint  NOT NULL,  -- its message's: the partition key
    status           text    NOT NULL CHECK (status IN ('delivered', 'filtered')),
    attempts         integer NOT NULL,
    first_attempt_at bigint,
    last_error       text,
    settled_at       bigint  NOT NULL,
    PRIMARY KEY (id, created_at)
  ) PARTITION BY RANGE (created_at);
  CREATE TABLE IF NOT EXISTS outcomes_kept PARTITION OF outcomes DEFAULT;
  -- Retention of what a dropped day did not take (the kept partition, late outcomes): by age.
  CREATE INDEX IF NOT EXISTS outcomes_settled ON outcomes USING brin (settled_at);

`

/**
 * Copies schema 5's deliveries whose id satisfies `range` (SQL over `id`) into schema 6's tables:
 * every one a message; a pending or dead one a queue row, a settled one an outcome. One statement
 * per table, in this order (the messages last: a range may be read from their highest id).
 */
export function copyDeliveries(range: string): string[] {
  return [
    `INSERT INTO queue (id, created_at, source, destination, status, attempts, first_attempt_at, next_attempt_at,
      last_error, updated_at, lease_until, lease_owner, paused_at, replay_of, replay_id)
    SELECT id, created_at, source, destination, status, attempts, first_attempt_at, next_attempt_at, last_error,
      updated_at, lease_until, lease_owner, paused_at, replay_of, replay_id
    FROM deliveries WHERE status IN ('pending', 'failed') AND ${range}`,
    `INSERT INTO outcomes (id, created_at, status, attempts, first_attempt_at, last_error, settled_at)
    SELECT id, created_at, status, attempts, first_attempt_at, last_error, updated_at
    FROM deliveries WHERE status IN ('delivered', 'filtered') AND ${range}`,
    `INSERT INTO messages (id, created_at, source, destination, message_id, type, message, user_id, event,
      replay_of, replay_id, erased_at)
    SELECT id, created_at, source, destination, message_id, type, message, user_id, event, replay_of, replay_id,
      erased_at
    FROM deliveries WHERE ${range}`,
  ]
}

/**
 * The PostgreSQL step, in the migration's transaction: relays of schema 5 stopped writing (the
 * table locked), what the online upgrade copied brought up to date (the queue rows it copied
 * whose delivery has moved on since, erasures since), the rest copied, `deliveries` dropped and
 * made again as the view. Without an online upgrade before it, the step copies everything.
 */
export const POSTGRES_SCHEMA6_STEP = `
  LOCK TABLE deliveries IN EXCLUSIVE MODE;
  ${SCHEMA6_TABLES}
  SELECT setval('${DELIVERY_IDS}', (SELECT coalesce(max(id), 0) + 1 FROM deliveries), false);

  -- What relays of schema 5 changed since the online copy took it (recorded by its trigger):
  -- copied again, whole. Then what they wrote since (or everything, without an online copy).
  DELETE FROM queue WHERE id IN (SELECT id FROM schema6_changed);
  DELETE FROM outcomes WHERE id IN (SELECT id FROM schema6_changed);
  DELETE FROM messages WHERE id IN (SELECT id FROM schema6_changed);
  CREATE TEMPORARY TABLE schema6_copy ON COMMIT DROP AS
    SELECT id FROM deliveries WHERE id > (SELECT coalesce(max(id), 0) FROM messages)
    UNION SELECT id FROM schema6_changed;
  ${copyDeliveries('id IN (SELECT id FROM schema6_copy)').join(';\n')};
  DROP TABLE schema6_changed;
  DROP TABLE deliveries;
  DROP FUNCTION IF EXISTS schema6_note_change();
  ${VIEW}
`

/**
 * Made with the tables by the online upgrade: every delivery a relay of schema 5 writes, changes or
 * deletes from then on is noted, so that the step copies those again, and nothing else.
 */
export const SCHEMA6_CHANGES_TRIGGER = `
  CREATE OR REPLACE FUNCTION schema6_note_change() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    INSERT INTO schema6_changed (id) VALUES (CASE WHEN TG_OP = 'DELETE' THEN OLD.id ELSE NEW.id END);
    RETURN NULL;
  END $$;
  DROP TRIGGER IF EXISTS schema6_changes ON deliveries;
  CREATE TRIGGER schema6_changes AFTER INSERT OR UPDATE OR DELETE ON deliveries
    FOR EACH ROW EXECUTE FUNCTION schema6_note_change();
`
