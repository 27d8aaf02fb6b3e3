import { afterEach, describe, expect, it } from 'vitest'
import { openPool, type PostgresPool } from '../../../src/relay/kit/postgres/pool'
import { freshPostgresDatabase } from '../../support/postgres'

// A PostgreSQL statement that outlasts storeTimeout fails, and the connection it ran on never
// serves another query in a state pg cannot tell apart from a fresh one. One connection in the
// pool: a connection that went back after its timeout would be the one the next query gets.

const STORE_TIMEOUT = 300
// Far longer than the bound: a statement that finishes has not been bounded.
const SLOW = 'SELECT pg_sleep(10)'

let pool: PostgresPool | undefined

afterEach(async () => {
  await pool?.end()
  pool = undefined
})

async function openSmallPool(): Promise<PostgresPool> {
  return openPool(await freshPostgresDatabase(), { max: 1, storeTimeout: STORE_TIMEOUT })
}

describe('a PostgreSQL pool with a storeTimeout', () => {
  it('fails a statement that outlasts it, and answers the next query with its own result', async () => {
    pool = await openSmallPool()
    await expect(pool.query(SLOW)).rejects.toThrow(/timeout/i)
    const { rows } = await pool.query<{ answer: number }>('SELECT $1::int AS answer', [42])
    expect(rows).toEqual([{ answer: 42 }])
  })

  it('fails a statement in a transaction, and the connection is not reused half-way through it', async () => {
    pool = await openSmallPool()
    const client = await pool.connect()
    let failure: unknown
    try {
      await client.query('BEGIN')
      await client.query('CREATE TABLE half_done (id int); INSERT INTO half_done VALUES (1)')
      await client.query(SLOW)
    } catch (error) {
      failure = error
      await client.query('ROLLBACK').catch(() => {})
    } finally {
      client.release(failure as Error | undefined)
    }
    expect(String(failure)).toMatch(/timeout/i)
    // Not inside the abandoned transaction: the table it created was never committed.
    const { rows } = await pool.query<{ found: string | null }>("SELECT to_regclass('half_done')::text AS found")
    expect(rows).toEqual([{ found: null }])
  })
})
