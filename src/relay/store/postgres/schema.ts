import { POSTGRES_ARCHIVE_REPLAYS_STEP } from '../archive-replays-schema'
import type { PoolClient, QueryConfig } from 'pg'
import { log } from '../../log'
import { type PostgresPool, transaction } from '../../kit/postgres/pool'
import { POSTGRES_ALERT_CLAIMS_STEP } from '../alert-claims'
import { POSTGRES_SESSIONS_STEP } from '../sessions-schema'
import { POSTGRES_REPLAYS_STEP } from '../replays-schema'
import { POSTGRES_SOURCE_CONFIGS_STEP } from '../source-configs-schema'
import { POSTGRES_VIOLATIONS_STEP } from '../violations-schema'
import { POSTGRES_ATTEMPT_CONSOLE_STEP } from '../attempt-console-schema'
import { SETTLED_INDEX_STEP } from '../settled-index-schema'
import { POSTGRES_SESSION_ROLE_STEP } from '../session-role-schema'
import { POSTGRES_ATTEMPTS_BY_DAY_STEP } from './attempts-by-day'
import { POSTGRES_ENQUEUE_FUNCTION_STEP } from './enqueue-function'
import { POSTGRES_ENQUEUE_FUNCTION2_STEP } from './enqueue-function2'
import { POSTGRES_MESSAGE_KEY_HASH_STEP } from './message-key-hash'
import { POSTGRES_SCHEMA6_STEP } from './schema6'
import { POSTGRES_SUPPRESSIONS_STEP } from './suppressions-schema'
import { POSTGRES_ENDPOINT_LIMITS_STEP } from './endpoint-limits-schema'
import { POSTGRES_ORDERING_STEP } from './ordering-schema'
import { POSTGRES_FIRST_ATTEMPT_DELIVERED_STEP } from './first-attempt-delivered'
import { POSTGRES_DELIVERY_BLOCKS_STEP } from './delivery-blocks'

// The circuit breaker's table (the second version): one row per webhook URL whose receiver has
// been failing; times are epoch ms.
const CIRCUITS = `
  CREATE TABLE circuits (
    url               text    PRIMARY KEY,
    state             text    NOT NULL CHECK (state IN ('closed', 'open', 'half-open')),
    failures          integer NOT NULL DEFAULT 0,  -- failed requests in a row
    probes            integer NOT NULL DEFAULT 0,  -- failed probes since it opened
    opened_at         bigint,                      -- epoch ms
    next_probe_at     bigint,                      -- epoch ms
    probe_owner       text,                        -- the relay holding the probe (half-open)
    probe_lease_until bigint,                      -- epoch ms; then another relay may probe
    last_error        text,
    updated_at        bigint  NOT NULL
  );
`

/**
 * The schema, one entry per version, applied in order. Version `n` is reached by running entry
 * `n - 1`; the version a database is at lives in `tracklet_schema`. Append new entries at the
 * end (never edit one that has shipped): a database written by an older relay is then brought up
 * to date in place.
 *
 * Times are epoch milliseconds in `bigint` columns (as in the SQLite store), so both stores judge
 * "due" and "leased" with the same numbers, read back as JS numbers.
 */
export const MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE deliveries (
    id               bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    source           text    NOT NULL,
    destination      text    NOT NULL,
    message_id       text    NOT NULL,
    type             text    NOT NULL,
    message          text    NOT NULL,   -- the message's JSON, as accepted (parsed only to deliver it)
    status           text    NOT NULL CHECK (status IN ('pending', 'delivered', 'failed')),
    attempts         integer NOT NULL DEFAULT 0,
    first_attempt_at bigint,             -- epoch ms; the retry window starts here
    next_attempt_at  bigint  NOT NULL,   -- epoch ms; when a pending delivery is due
    last_error       text,
    created_at       bigint  NOT NULL,
    updated_at       bigint  NOT NULL,
    lease_until      bigint,             -- epoch ms; no other relay claims it before then
    lease_owner      text                -- the relay holding the lease
  ) WITH (
    -- Every delivery is updated at least twice (claimed, then recorded): room on each page lets
    -- the claim (which changes no indexed column) be a HOT update, and an outbox churns, so it is
    -- vacuumed after 1 % of it changed rather than PostgreSQL's default 20 %.
    fillfactor = 80,
    autovacuum_vacuum_scale_factor = 0.01,
    autovacuum_analyze_scale_factor = 0.02
  );
  -- At-least-once from the client too: a batch the SDK sends again does not create a second delivery.
  CREATE UNIQUE INDEX deliveries_message ON deliveries (source, destination, message_id);
  -- The claim: a source's pending deliveries, oldest due first.
  CREATE INDEX deliveries_due ON deliveries (source, next_attempt_at, id) WHERE status = 'pending';
  -- The delivery log filtered by status, paged by id.
  CREATE INDEX deliveries_status ON deliveries (status, id);
  -- Retention: delivered deliveries by age.
  CREATE INDEX deliveries_delivered ON deliveries (updated_at) WHERE status = 'delivered';

  -- One row per HTTP request of an attempt. No foreign key: an outcome recorded late (by a relay
  -- whose lease ran out) must never fail its whole batch; retention deletes a delivery's attempts with it.
  CREATE TABLE attempts (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    delivery_id bigint  NOT NULL,
    at          bigint  NOT NULL,        -- epoch ms when the attempt started
    url         text    NOT NULL,
    status      integer,                 -- the HTTP status, when there was an answer
    error       text,                    -- why it failed, when it did
    ms          integer NOT NULL         -- how long it took
  ) WITH (autovacuum_vacuum_scale_factor = 0.01);
  CREATE INDEX attempts_delivery ON attempts (delivery_id);

  CREATE TABLE audience_members (
    source   text NOT NULL,
    audience text NOT NULL,
    user_id  text NOT NULL,
    PRIMARY KEY (source, audience, user_id)
  );
  `,
  CIRCUITS,
  // The operator's console. Deliveries keep the message's userId and event for searching (filled
  // at enqueue; rows written before are filled here while pending or dead-lettered, and left NULL
  // once delivered: history that retention prunes), indexed with message_id for searches.
  // Attempts keep what the receiver said and the headers sent; by URL and time for the endpoints
  // view. Circuits gain the operator's pause.
  `
  ALTER TABLE deliveries
    ADD COLUMN user_id   text,
    ADD COLUMN event     text,
    ADD COLUMN paused_at bigint;  -- epoch ms; parked behind paused circuits since
  UPDATE deliveries SET user_id = message::json ->> 'userId', event = message::json ->> 'event'
    WHERE status <> 'delivered' AND message LIKE '{%';
  CREATE INDEX deliveries_message_id ON deliveries (message_id);
  CREATE INDEX deliveries_user ON deliveries (user_id, id) WHERE user_id IS NOT NULL;

  ALTER TABLE attempts
    ADD COLUMN response_body   text,  -- the start of a failed request's answer
    ADD COLUMN request_headers text;  -- JSON, secrets hidden
  CREATE INDEX attempts_url ON attempts (url, at);

  ALTER TABLE circuits
    DROP CONSTRAINT circuits_state_check,
    ADD CONSTRAINT circuits_state_check CHECK (state IN ('closed', 'open', 'half-open', 'paused')),
    ADD COLUMN paused_at bigint;  -- epoch ms; an operator paused it
  `,
  // Less WAL per message (measured per statement, docs/postgres.md). A claim changes no indexed
  // column, but a row carries its message's JSON, so at fillfactor 80 a page has room for two or
  // three new versions: most of a batch's claims moved to other pages, each a new entry in every
  // index. At 50 they stay on their page (HOT: no index entry), and the outcome's new version
  // mostly does too. And one index fewer for every insert and moved row: the duplicate check's
  // index leads with message_id, so it also serves searches by message id (ON CONFLICT infers an
  // index by its set of columns, in any order). Both apply to pages written from now on.
  `
  ALTER TABLE deliveries SET (fillfactor = 50);
  CREATE UNIQUE INDEX deliveries_message_route ON deliveries (message_id, source, destination);
  DROP INDEX deliveries_message;
  DROP INDEX deliveries_message_id;
  `,
  // Less WAL per message again, where pg_walinspect showed it going (bench/pg-wal-breakdown.mjs,
  // docs/postgres.md). Recording an outcome changes the status, so its new row version is never
  // HOT and gets an entry in every index whose predicate it meets: a status index over every
  // delivery took one at ingest and one at each outcome. Only dead letters (few) keep one now;
  // pending ones are found through deliveries_due, delivered ones (most) by id. And no search reads
  // attempts by id alone (they are found by delivery and by URL, ordered by id after), so attempts
  // keep one index per request instead of two: a primary key on (delivery_id, id) serves the
  // delivery log's requests in order. A primary key stays because a table without one has no
  // replica identity: with a publication on the database (logical replication, CDC, blue/green
  // upgrades) every DELETE from it fails, retention included; tracklet_schema gets a replica
  // identity (its whole row) for the same reason: migrate rewrites that row at every start.
  `
  DROP INDEX deliveries_status;
  CREATE INDEX deliveries_failed ON deliveries (id) WHERE status = 'failed';
  ALTER TABLE attempts DROP CONSTRAINT attempts_pkey, ADD PRIMARY KEY (delivery_id, id);
  DROP INDEX attempts_delivery;
  ALTER TABLE tracklet_schema REPLICA IDENTITY FULL;
  `,
  // The operator page's sessions, shared by every relay on the database.
  POSTGRES_SESSIONS_STEP,
  // The filtered status (docs/functions.md): a delivery its destination's function dropped.
  `
  ALTER TABLE deliveries
    DROP CONSTRAINT deliveries_status_check,
    ADD CONSTRAINT deliveries_status_check CHECK (status IN ('pending', 'delivered', 'failed', 'filtered'));
  `,
  // Replays (docs/replay.md).
  POSTGRES_REPLAYS_STEP,
  POSTGRES_SOURCE_CONFIGS_STEP,
  POSTGRES_ALERT_CLAIMS_STEP,
  // The violations of tracking plans.
  POSTGRES_VIOLATIONS_STEP,
  POSTGRES_ATTEMPT_CONSOLE_STEP,
  SETTLED_INDEX_STEP,
  // Schema 6: messages written once (partitioned by day), a narrow queue, outcomes appended.
  // Right after schema 5's last step: a database a relay of the previous version wrote stands
  // exactly before it, so its outbox is copied online (./upgrade6.ts) before the step switches.
  POSTGRES_SCHEMA6_STEP,
  // Which token signed each operator-page session in.
  POSTGRES_SESSION_ROLE_STEP,
  // Schema 6's requests log partitioned by its deliveries' day, dropped with them.
  POSTGRES_ATTEMPTS_BY_DAY_STEP,
  // Suppressed users (docs/privacy.md).
  POSTGRES_SUPPRESSIONS_STEP,
  // Ingest's write in one statement: the messages' locks and the insert in one function.
  POSTGRES_ENQUEUE_FUNCTION_STEP,
  // The messages' key as a hash index: ingest's duplicate check reads one page per retained day.
  POSTGRES_MESSAGE_KEY_HASH_STEP,
  // The per-URL limits' shared budget (docs/delivery-controls.md).
  POSTGRES_ENDPOINT_LIMITS_STEP,
  // Replays from the archive, and the erasures they skip (docs/replay.md).
  POSTGRES_ARCHIVE_REPLAYS_STEP,
  // Ingest's function with each message's key worked out once (its lock, its look-up).
  POSTGRES_ENQUEUE_FUNCTION2_STEP,
  // Ordered delivery per user: the queue's ordering key (docs/delivery-controls.md).
  POSTGRES_ORDERING_STEP,
  // A claim's new queue row version stays on its page (HOT: no index entry, a smaller WAL record)
  // only while the page has room: at 70, a burst's pages filled at insert had room for half of
  // them, and the other half each took an entry in two indexes (bench/pg-claim-explain.mjs: 50 %
  // HOT at 70, all at 40; delivery's server CPU 0.82×, WAL 709 B against 862 B a message). The
  // queue holds only what is pending, so the room costs little. It applies to pages written from
  // now on; the lock it takes lets reads and writes go on.
  'ALTER TABLE queue SET (fillfactor = 40)',
  // A delivery delivered at its first attempt writes no outcome row; the view reads it so.
  POSTGRES_FIRST_ATTEMPT_DELIVERED_STEP,
  // A new delivery gets no queue row: ingest writes leased blocks (docs/postgres.md, "Leased blocks").
  POSTGRES_DELIVERY_BLOCKS_STEP,
]

// The advisory lock that serialises migrations between relays starting together (any constant
// no other application is likely to pick: "tracklet" in ASCII).
export const MIGRATION_LOCK = 0x747261636b6c6574n

// How long an upgrade may take, and a relay wait for another relay's: not `storeTimeout`, which
// bounds the calls of a running relay (seconds), while building an index on a big outbox takes
// minutes. Still a limit, on the client's side, so a server that froze mid-upgrade cannot hold a
// start for ever.
export const SCHEMA_UPGRADE_LIMIT_MS = 60 * 60_000

/**
 * Brings the database's schema up to date, in one transaction under an advisory lock: relays
 * started at the same time on an empty database take turns, the first creates the tables and the
 * others find them made. An upgrade (and a wait for another relay's) is bounded by
 * {@link SCHEMA_UPGRADE_LIMIT_MS}, not by `storeTimeout`, and says so in the log; a database
 * already up to date takes the usual bounded calls.
 *
 * @throws {Error} when the database was written by a newer relay (a schema version this one does not know).
 */
export async function migrate(pool: PostgresPool, migrations: readonly string[] = MIGRATIONS): Promise<void> {
  await transaction(pool, async (client) => {
    const long = (text: string, values?: unknown[]) =>
      client.query({ text, values, query_timeout: SCHEMA_UPGRADE_LIMIT_MS } as QueryConfig)
    const { rows } = await client.query('SELECT pg_try_advisory_xact_lock($1) AS got', [MIGRATION_LOCK.toString()])
    if (!rows[0].got) {
      log.info('waiting for another relay to bring the PostgreSQL schema up to date', { event: 'schema-wait' })
      await client.query('SET LOCAL statement_timeout = 0')
      await long('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK.toString()])
    }
    await client.query('CREATE TABLE IF NOT EXISTS tracklet_schema (version integer NOT NULL)')
    const version = await schemaVersion(client)
    if (version > migrations.length) {
      throw new Error(
        `it was written by a newer relay (schema ${version}, this relay knows ${migrations.length}); upgrade this relay`,
      )
    }
    // Up to date (every start but the first of a version): nothing is written.
    if (version < migrations.length) {
      if (version > 0) {
        log.info(
          `upgrading the PostgreSQL schema from version ${version} to ${migrations.length} (on a big outbox, index builds take minutes)`,
          { event: 'schema-upgrade' },
        )
      }
      await client.query('SET LOCAL statement_timeout = 0')
      for (const sql of migrations.slice(version)) await long(sql)
      await client.query('DELETE FROM tracklet_schema')
      await client.query('INSERT INTO tracklet_schema (version) VALUES ($1)', [migrations.length])
    }
  })
}

async function schemaVersion(client: PoolClient): Promise<number> {
  const { rows } = await client.query<{ version: number }>('SELECT version FROM tracklet_schema')
  return rows[0]?.version ?? 0
}
