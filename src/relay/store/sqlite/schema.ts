import { SQLITE_ARCHIVE_REPLAYS_STEP } from '../archive-replays-schema'
import type Database from 'better-sqlite3'
import { RELAY_DEFAULTS } from '../../config/defaults'
import { RelayError } from '../../errors'
import { loadDriver } from '../../kit/load-driver'
import { SQLITE_ALERT_CLAIMS_STEP } from '../alert-claims'
import { SQLITE_SESSIONS_STEP } from '../sessions-schema'
import { SQLITE_SOURCE_CONFIGS_STEP } from '../source-configs-schema'
import { SQLITE_FAILED_INDEX_STEP } from './failed-index'
import { FILTERED_STATUS_MIGRATION } from './filtered-status'
import { SQLITE_REPLAYS_STEP } from '../replays-schema'
import { SQLITE_VIOLATIONS_STEP } from '../violations-schema'
import { SQLITE_ATTEMPT_CONSOLE_STEP } from '../attempt-console-schema'
import { SETTLED_INDEX_STEP } from '../settled-index-schema'
import { SQLITE_SESSION_ROLE_STEP } from '../session-role-schema'
import { SQLITE_ORIGINALS_TIME_STEP } from './originals-time-index'
import { SQLITE_SUPPRESSIONS_STEP } from './suppressions-schema'
import { SQLITE_ENDPOINT_LIMITS_STEP } from './endpoint-limits-schema'
import { SQLITE_ORDERING_STEP } from './ordering-schema'

/** The relay's SQLite database: the outbox, the attempts log and audience memberships. */
export type SqliteDatabase = Database.Database

// Each entry upgrades the schema by one version (PRAGMA user_version), so a file written by an
// older relay is brought up to date in place rather than refused.
export const MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE deliveries (
    id               INTEGER PRIMARY KEY,
    source           TEXT    NOT NULL,
    destination      TEXT    NOT NULL,
    message_id       TEXT    NOT NULL,
    type             TEXT    NOT NULL,
    message          TEXT    NOT NULL,   -- the message's JSON, as accepted
    status           TEXT    NOT NULL CHECK (status IN ('pending', 'delivered', 'failed')),
    attempts         INTEGER NOT NULL DEFAULT 0,
    first_attempt_at INTEGER,            -- epoch ms; the retry window starts here
    next_attempt_at  INTEGER NOT NULL,   -- epoch ms; when a pending delivery is due
    last_error       TEXT,
    created_at       INTEGER NOT NULL,
    updated_at       INTEGER NOT NULL
  );
  -- At-least-once from the client too: a batch the SDK sends again (its answer was lost) does not
  -- create a second delivery of the same message.
  CREATE UNIQUE INDEX deliveries_message ON deliveries (source, destination, message_id);
  -- A delivery stays pending while it is attempted (the worker tracks what it has taken in memory),
  -- so one that was in flight when the process died is simply due again at the next start.
  CREATE INDEX deliveries_due ON deliveries (source, next_attempt_at) WHERE status = 'pending';
  CREATE INDEX deliveries_status ON deliveries (status, id);

  CREATE TABLE attempts (
    id          INTEGER PRIMARY KEY,
    delivery_id INTEGER NOT NULL REFERENCES deliveries (id),
    at          INTEGER NOT NULL,        -- epoch ms when the attempt started
    url         TEXT    NOT NULL,
    status      INTEGER,                 -- the HTTP status, when there was an answer
    error       TEXT,                    -- why it failed, when it did
    ms          INTEGER NOT NULL         -- how long it took
  );
  CREATE INDEX attempts_delivery ON attempts (delivery_id);

  CREATE TABLE audience_members (
    source   TEXT NOT NULL,
    audience TEXT NOT NULL,
    user_id  TEXT NOT NULL,
    PRIMARY KEY (source, audience, user_id)
  ) WITHOUT ROWID;
  `,
  // Leases: a claimed delivery is held by one worker until lease_until (epoch ms), so the same
  // schema serves one relay on SQLite and many on PostgreSQL. Retention prunes delivered rows by age.
  `
  ALTER TABLE deliveries ADD COLUMN lease_until INTEGER;
  ALTER TABLE deliveries ADD COLUMN lease_owner TEXT;
  CREATE INDEX deliveries_delivered ON deliveries (updated_at) WHERE status = 'delivered';
  `,
  // The circuit breaker: one row per webhook URL whose receiver has been failing (none while it
  // answers), so every relay on the database sees the same circuit and only one holds its probe.
  `
  CREATE TABLE circuits (
    url               TEXT    PRIMARY KEY,
    state             TEXT    NOT NULL CHECK (state IN ('closed', 'open', 'half-open')),
    failures          INTEGER NOT NULL DEFAULT 0,  -- failed requests in a row
    probes            INTEGER NOT NULL DEFAULT 0,  -- failed probes since it opened
    opened_at         INTEGER,                     -- epoch ms
    next_probe_at     INTEGER,                     -- epoch ms
    probe_owner       TEXT,                        -- the relay holding the probe (half-open)
    probe_lease_until INTEGER,                     -- epoch ms; then another relay may probe
    last_error        TEXT,
    updated_at        INTEGER NOT NULL
  ) WITHOUT ROWID;
  `,
  // The operator's console. Deliveries keep the message's userId and event for searching (filled
  // at enqueue; rows written before are filled here while pending or dead-lettered, and left
  // NULL once delivered: history that retention prunes), indexed with message_id for searches.
  // Attempts keep what the receiver said and the headers sent; by URL and time for the endpoints
  // view. Circuits gain the operator's pause (SQLite cannot alter a CHECK: the table is rebuilt).
  `
  ALTER TABLE deliveries ADD COLUMN user_id TEXT;
  ALTER TABLE deliveries ADD COLUMN event TEXT;
  ALTER TABLE deliveries ADD COLUMN paused_at INTEGER;  -- epoch ms; parked behind paused circuits since
  UPDATE deliveries SET user_id = json_extract(message, '$.userId'), event = json_extract(message, '$.event')
    WHERE status <> 'delivered' AND json_valid(message);
  CREATE INDEX deliveries_message_id ON deliveries (message_id);
  CREATE INDEX deliveries_user ON deliveries (user_id) WHERE user_id IS NOT NULL;

  ALTER TABLE attempts ADD COLUMN response_body TEXT;    -- the start of a failed request's answer
  ALTER TABLE attempts ADD COLUMN request_headers TEXT;  -- JSON, secrets hidden
  CREATE INDEX attempts_url ON attempts (url, at);

  CREATE TABLE circuits_paused (
    url               TEXT    PRIMARY KEY,
    state             TEXT    NOT NULL CHECK (state IN ('closed', 'open', 'half-open', 'paused')),
    failures          INTEGER NOT NULL DEFAULT 0,
    probes            INTEGER NOT NULL DEFAULT 0,
    opened_at         INTEGER,
    next_probe_at     INTEGER,
    probe_owner       TEXT,
    probe_lease_until INTEGER,
    last_error        TEXT,
    updated_at        INTEGER NOT NULL,
    paused_at         INTEGER                      -- epoch ms; an operator paused it
  ) WITHOUT ROWID;
  INSERT INTO circuits_paused
    SELECT url, state, failures, probes, opened_at, next_probe_at, probe_owner, probe_lease_until, last_error, updated_at, NULL
    FROM circuits;
  DROP TABLE circuits;
  ALTER TABLE circuits_paused RENAME TO circuits;
  `,
  // One index fewer for every insert, as on PostgreSQL: the duplicate check's unique index leads
  // with message_id, so it also serves searches by message id (INSERT OR IGNORE skips a duplicate
  // whichever unique index finds it).
  `
  CREATE UNIQUE INDEX deliveries_message_route ON deliveries (message_id, source, destination);
  DROP INDEX deliveries_message;
  DROP INDEX deliveries_message_id;
  `,
  // The operator page's sessions, shared by every process on the file (`--workers`).
  SQLITE_SESSIONS_STEP,
  FILTERED_STATUS_MIGRATION,
  // Replays (docs/replay.md).
  SQLITE_REPLAYS_STEP,
  SQLITE_SOURCE_CONFIGS_STEP,
  SQLITE_ALERT_CLAIMS_STEP,
  // The violations of tracking plans.
  SQLITE_VIOLATIONS_STEP,
  SQLITE_ATTEMPT_CONSOLE_STEP,
  SETTLED_INDEX_STEP,
  // Fewer index entries per message: docs/postgres.md.
  SQLITE_FAILED_INDEX_STEP,
  // Which token signed each operator-page session in.
  SQLITE_SESSION_ROLE_STEP,
  // Replays' counts and first steps by time (./originals-time-index.ts).
  SQLITE_ORIGINALS_TIME_STEP,
  // Suppressed users (docs/privacy.md).
  SQLITE_SUPPRESSIONS_STEP,
  // The per-URL limits' shared budget (docs/delivery-controls.md).
  SQLITE_ENDPOINT_LIMITS_STEP,
  // Replays from the archive, and the erasures they skip (docs/replay.md).
  SQLITE_ARCHIVE_REPLAYS_STEP,
  // Ordered delivery per user: the deliveries' ordering key (docs/delivery-controls.md).
  SQLITE_ORDERING_STEP,
]

/** Options of {@link openSqliteDatabase}. */
export interface SqliteDatabaseOptions {
  /**
   * How long a statement waits for a lock another process holds (a second relay on the file by
   * mistake, a backup) before it fails, ms: the relay's `storeTimeout`, so a locked file costs a
   * request no more than a frozen PostgreSQL would. @default RELAY_DEFAULTS.storeTimeout
   */
  busyTimeout?: number
}

/**
 * Opens (creating when missing) the relay's database at `path` (a file, or `':memory:'`), in WAL
 * mode with `synchronous = FULL`: a commit is on disk before the relay answers 2xx, and readers
 * never block the writer.
 */
export async function openSqliteDatabase(path: string, options: SqliteDatabaseOptions = {}): Promise<SqliteDatabase> {
  const busyTimeout = options.busyTimeout ?? RELAY_DEFAULTS.storeTimeout
  const { default: Database } = await loadDriver('better-sqlite3', 'SQLite', () => import('better-sqlite3'))
  let db: SqliteDatabase
  try {
    db = new Database(path)
  } catch (error) {
    throw new RelayError('ERR_RELAY_DATABASE', `cannot open the relay database ${path}: ${(error as Error).message}`, {
      cause: error,
    })
  }
  try {
    db.pragma('journal_mode = WAL')
    db.pragma('synchronous = FULL')
    db.pragma('foreign_keys = ON')
    // Another process holding the file (a second relay by mistake) makes us wait briefly, not fail.
    db.pragma(`busy_timeout = ${Math.floor(busyTimeout)}`)
    migrate(db)
    return db
  } catch (error) {
    db.close()
    throw new RelayError(
      'ERR_RELAY_DATABASE',
      `cannot prepare the relay database ${path}: ${(error as Error).message}`,
      { cause: error },
    )
  }
}

function migrate(db: SqliteDatabase): void {
  const version = db.pragma('user_version', { simple: true }) as number
  if (version > MIGRATIONS.length) {
    throw new Error(`it was written by a newer relay (schema ${version}, this relay knows ${MIGRATIONS.length})`)
  }
  db.transaction(() => {
    for (const sql of MIGRATIONS.slice(version)) db.exec(sql)
    db.pragma(`user_version = ${MIGRATIONS.length}`)
  })()
}
