import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MIGRATIONS as POSTGRES_MIGRATIONS } from '../../../src/relay/store/postgres/schema'
import { MIGRATIONS as SQLITE_MIGRATIONS } from '../../../src/relay/store/sqlite/schema'
import type { Store } from '../../../src/relay/store/store'
import { freshPostgresDatabase, sql } from '../../support/postgres'
import { openTestStore } from '../../support/stores'

// A database written by the relay before the operator's console (SQLite schema 3, PostgreSQL 2)
// is brought up to date in place: pending and dead-lettered deliveries become searchable by user
// and event, delivered ones (history) are left unfilled, and circuits are kept.
const ROWS = `
  INSERT INTO deliveries (source, destination, message_id, type, message, status, next_attempt_at, created_at, updated_at)
  VALUES
    ('web', 'Webhooks', 'm1', 'track', '{"userId":"ada","event":"Signed Up","messageId":"m1"}', 'failed', 1, 1, 1),
    ('web', 'Webhooks', 'm2', 'track', '{"userId":"ada","event":"Signed Up","messageId":"m2"}', 'delivered', 1, 2, 2),
    ('web', 'Webhooks', 'm3', 'track', '{"userId":"ada","event":"Signed Up","messageId":"m3"}', 'pending', 1, 3, 3);
  INSERT INTO circuits (url, state, failures, probes, opened_at, next_probe_at, last_error, updated_at)
  VALUES ('https://down.example/', 'open', 5, 0, 1, 2, 'HTTP 503', 1);`

async function expectUpgraded(store: Store) {
  expect((await store.listNewest({ userId: 'ada', limit: 10 })).map((d) => d.messageId)).toEqual(['m3', 'm1'])
  expect((await store.listNewest({ event: 'Signed Up', limit: 10 })).map((d) => d.messageId)).toEqual(['m3', 'm1'])
  expect((await store.listNewest({ messageId: 'm2', limit: 10 })).map((d) => d.status)).toEqual(['delivered'])
  expect(await store.circuits.get(['https://down.example/'])).toMatchObject([{ state: 'open', failures: 5 }])
  expect(await store.circuits.pause('https://down.example/', 5)).toMatchObject({ state: 'paused', failures: 5 })
}

describe('the console migration', () => {
  let dir: string
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tracklet-migration-'))
  })
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true })
  })

  it('upgrades a SQLite file of schema 3 in place', async () => {
    const path = join(dir, 'old.db')
    const db = new Database(path)
    for (const text of SQLITE_MIGRATIONS.slice(0, 3)) db.exec(text)
    db.pragma('user_version = 3')
    db.exec(ROWS)
    db.close()
    const store = await openTestStore('sqlite', Date.now, path)
    try {
      await expectUpgraded(store)
    } finally {
      await store.close()
    }
  })

  it('upgrades a PostgreSQL database of schema 2 in place', async () => {
    const url = await freshPostgresDatabase()
    for (const text of POSTGRES_MIGRATIONS.slice(0, 2)) await sql(url, text)
    await sql(url, 'CREATE TABLE tracklet_schema (version integer NOT NULL)')
    await sql(url, 'INSERT INTO tracklet_schema (version) VALUES (2)')
    await sql(url, ROWS)
    const store = await openTestStore('postgres', Date.now, url)
    try {
      await expectUpgraded(store)
    } finally {
      await store.close()
    }
  })
})
