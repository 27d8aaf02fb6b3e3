import pg from 'pg'
import { afterEach, describe, expect, it } from 'vitest'
import { openPool, type PostgresPool } from '../../../src/relay/kit/postgres/pool'
import { MIGRATIONS, MIGRATION_LOCK, migrate } from '../../../src/relay/store/postgres/schema'
import { freshPostgresDatabase, sql } from '../../support/postgres'

// An upgrade on a big outbox builds indexes for minutes, far past `storeTimeout` (which bounds a
// running relay's calls, 5 s by default): the upgrade, and another relay's wait for it, must not
// fail at that bound. Here a step slower than a 200 ms storeTimeout stands in for an index build.
const STORE_TIMEOUT = 200
const SLOW_STEP = 'SELECT pg_sleep(0.6)'

let pool: PostgresPool | undefined
afterEach(async () => {
  await pool?.end()
  pool = undefined
})

async function schemaVersion(url: string): Promise<number> {
  const [row] = await sql<{ version: number }>(url, 'SELECT version FROM tracklet_schema')
  return row!.version
}

describe('PostgreSQL schema upgrades', () => {
  it('finish a step that takes longer than storeTimeout', async () => {
    const url = await freshPostgresDatabase()
    pool = await openPool(url, { max: 2, storeTimeout: STORE_TIMEOUT })
    await migrate(pool, [...MIGRATIONS, SLOW_STEP])
    expect(await schemaVersion(url)).toBe(MIGRATIONS.length + 1)
  })

  it('wait, past storeTimeout, for another relay that is upgrading, then find the schema made', async () => {
    const url = await freshPostgresDatabase()
    // Another relay's upgrade: it holds the migration lock (and writes the schema) meanwhile.
    const other = new pg.Client({ connectionString: url })
    await other.connect()
    await other.query('BEGIN')
    await other.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK.toString()])
    pool = await openPool(url, { max: 2, storeTimeout: STORE_TIMEOUT })
    const waiting = migrate(pool)
    await other.query(SLOW_STEP)
    await other.query('COMMIT')
    await other.end()
    await waiting
    expect(await schemaVersion(url)).toBe(MIGRATIONS.length)
  })

  it('leave an up-to-date database as it is, and still refuse one written by a newer relay', async () => {
    const url = await freshPostgresDatabase()
    pool = await openPool(url, { max: 2, storeTimeout: STORE_TIMEOUT })
    await migrate(pool)
    const [before] = await sql<{ xmin: string }>(url, 'SELECT xmin::text FROM tracklet_schema')
    await migrate(pool)
    const [after] = await sql<{ xmin: string }>(url, 'SELECT xmin::text FROM tracklet_schema')
    expect(after).toEqual(before)
    await sql(url, 'UPDATE tracklet_schema SET version = version + 1')
    await expect(migrate(pool)).rejects.toThrow(/written by a newer relay/)
  })
})
