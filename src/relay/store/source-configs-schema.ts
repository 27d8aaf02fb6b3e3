// The tables of sources created through the admin API (docs/relay.md, "Sources through the API"),
// one schema step in each store (appended to their MIGRATIONS). `IF NOT EXISTS` throughout: the
// step stands on its own, whichever other steps come before it.
//
// - api_sources: one row per source; `settings` is its destinations and schema as JSON, every
//   secret in it already encrypted by the relay (the store never sees one in clear).
// - api_write_keys: each live write key of a source, as its SHA-256 digest (never the key).
// - config_audit: every change, newest by id; `changes` is JSON with secrets masked.
// - config_version: one row, bumped by every change in its transaction: what relays poll (one
//   cheap read) and the revision a source's ETag is made of.

/** The SQLite step: times are epoch ms, as everywhere in the schema. */
export const SQLITE_SOURCE_CONFIGS_STEP = `
  CREATE TABLE IF NOT EXISTS api_sources (
    name       TEXT    PRIMARY KEY,
    enabled    INTEGER NOT NULL,
    settings   TEXT    NOT NULL,   -- JSON: { destinations, schema }, secrets encrypted
    revision   INTEGER NOT NULL,   -- config_version when last written: its ETag
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
  ) WITHOUT ROWID;
  CREATE TABLE IF NOT EXISTS api_write_keys (
    id         TEXT    PRIMARY KEY,
    source     TEXT    NOT NULL,
    digest     TEXT    NOT NULL UNIQUE,  -- SHA-256 of the key, hex; never the key
    prefix     TEXT    NOT NULL,         -- its first characters, to tell keys apart
    created_at INTEGER NOT NULL
  ) WITHOUT ROWID;
  CREATE INDEX IF NOT EXISTS api_write_keys_source ON api_write_keys (source);
  CREATE TABLE IF NOT EXISTS config_audit (
    id      INTEGER PRIMARY KEY,
    at      INTEGER NOT NULL,
    actor   TEXT    NOT NULL,
    action  TEXT    NOT NULL,
    target  TEXT    NOT NULL,
    changes TEXT    NOT NULL   -- JSON, secrets masked
  );
  CREATE TABLE IF NOT EXISTS config_version (
    id      INTEGER PRIMARY KEY CHECK (id = 1),
    version INTEGER NOT NULL
  );
  INSERT OR IGNORE INTO config_version (id, version) VALUES (1, 0);
`

/** The PostgreSQL step. */
export const POSTGRES_SOURCE_CONFIGS_STEP = `
  CREATE TABLE IF NOT EXISTS api_sources (
    name       text    PRIMARY KEY,
    enabled    boolean NOT NULL,
    settings   text    NOT NULL,   -- JSON: { destinations, schema }, secrets encrypted
    revision   bigint  NOT NULL,   -- config_version when last written: its ETag
    created_at bigint  NOT NULL,
    updated_at bigint  NOT NULL
  );
  CREATE TABLE IF NOT EXISTS api_write_keys (
    id         text   PRIMARY KEY,
    source     text   NOT NULL,
    digest     text   NOT NULL UNIQUE,  -- SHA-256 of the key, hex; never the key
    prefix     text   NOT NULL,         -- its first characters, to tell keys apart
    created_at bigint NOT NULL
  );
  CREATE INDEX IF NOT EXISTS api_write_keys_source ON api_write_keys (source);
  CREATE TABLE IF NOT EXISTS config_audit (
    id      bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at      bigint NOT NULL,
    actor   text   NOT NULL,
    action  text   NOT NULL,
    target  text   NOT NULL,
    changes text   NOT NULL   -- JSON, secrets masked
  );
  CREATE TABLE IF NOT EXISTS config_version (
    id      integer PRIMARY KEY CHECK (id = 1),
    version bigint  NOT NULL
  );
  INSERT INTO config_version (id, version) VALUES (1, 0) ON CONFLICT (id) DO NOTHING;
`
