import { afterEach, describe, expect, it } from 'vitest'
import { PostgresNotifications } from '../../../src/relay/store/notifications/postgres'
import { openPool, type PostgresPool, transaction } from '../../../src/relay/kit/postgres/pool'
import { MIGRATION_LOCK, migrate } from '../../../src/relay/store/postgres/schema'
import { freshPostgresDatabase, sql } from '../../support/postgres'
import { waitFor } from '../../support/wait-for'

// Connections the relay holds outside the pool's care, ended by the server while they are held:
// each costs the call using it an error, never the process (an 'error' event nobody listens to is
// an uncaught exception, which vitest reports as a failure of the run).

const cleanups: (() => Promise<unknown>)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

async function open(): Promise<{ url: string; pool: PostgresPool }> {
  const url = await freshPostgresDatabase()
  const pool = await openPool(url, { max: 2, storeTimeout: 5000 })
  cleanups.push(() => pool.end())
  return { url, pool }
}

/** Ends the session `pid` from another connection, as an operator or a failover does. */
async function terminate(url: string, pid: number): Promise<void> {
  await sql(url, 'SELECT pg_terminate_backend($1)', [pid])
}

const backendPid = async (client: { query: PostgresPool['query'] }) =>
  (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid

describe('a PostgreSQL connection ended while the relay holds it', () => {
  it('fails the transaction holding it, and the pool serves the next call on a new connection', async () => {
    const { url, pool } = await open()
    let ended: Promise<void> | undefined
    const work = transaction(pool, async (client) => {
      const pid = await backendPid(client)
      ended = new Promise((resolve) => client.once('end', () => resolve()))
      // Between two statements, with no query in flight: pg emits 'error' on the client.
      await terminate(url, pid)
      await ended
      await client.query('SELECT 1')
    })
    await expect(work).rejects.toThrow(/terminat|not queryable/i)
    const { rows } = await pool.query<{ one: number }>('SELECT 1 AS one')
    expect(rows).toEqual([{ one: 1 }])
  })

  it('leaves a client checked out for a session lock to fail its next query, not the process', async () => {
    const { url, pool } = await open()
    const client = await pool.connect()
    await client.query('SELECT pg_advisory_lock(42)')
    const ended = new Promise<void>((resolve) => client.once('end', () => resolve()))
    await terminate(url, await backendPid(client))
    await ended
    await expect(client.query('SELECT pg_advisory_unlock(42)')).rejects.toThrow()
    client.release()
    // The lock went with the session: another connection takes it at once.
    const { rows } = await pool.query<{ got: boolean }>('SELECT pg_try_advisory_lock(42) AS got')
    expect(rows).toEqual([{ got: true }])
  })

  it('fails a one-statement call whose connection ends mid-statement', async () => {
    const { url, pool } = await open()
    // Its failure is looked at once the session is ended: caught now, not left unhandled meanwhile.
    const slow = pool.query('SELECT pg_sleep(5)').then(
      () => 'answered',
      (error: unknown) => String(error),
    )
    const busy = await waitFor(async () => {
      const rows = await sql<{ pid: number }>(
        url,
        "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'SELECT pg_sleep(5)%'",
      )
      return rows[0]?.pid
    }, 'the statement to run')
    await terminate(url, busy)
    expect(await slow).toMatch(/terminat/i)
    expect((await pool.query<{ one: number }>('SELECT 1 AS one')).rows).toEqual([{ one: 1 }])
  })

  it("fails a migration whose session is ended while it waits for another relay's lock", async () => {
    const { url, pool } = await open()
    // Another relay upgrading: it holds the migration lock in its transaction.
    const other = await pool.connect()
    await other.query('BEGIN')
    await other.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK.toString()])
    // Its failure is looked at once the session is ended: caught now, not left unhandled meanwhile.
    const migrating = migrate(pool).then(
      () => 'migrated',
      (error: unknown) => String(error),
    )
    const waiting = await waitFor(async () => {
      const rows = await sql<{ pid: number }>(
        url,
        "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
      )
      return rows[0]?.pid
    }, 'the migration to wait for the lock')
    await terminate(url, waiting)
    expect(await migrating).toMatch(/terminat/i)
    await other.query('ROLLBACK')
    other.release()
    await migrate(pool)
    expect(await sql(url, 'SELECT version FROM tracklet_schema')).toHaveLength(1)
  })

  it('opens the LISTEN connection again, hearing what is sent after it was ended', async () => {
    const { url } = await open()
    const channel = new PostgresNotifications(url)
    cleanups.push(() => channel.close())
    const heard: string[] = []
    await channel.listen('cuts', (payload) => heard.push(payload))
    const listener = () =>
      sql<{ pid: number }>(
        url,
        "SELECT pid FROM pg_stat_activity WHERE application_name = 'tracklet-relay-notifications' AND datname = current_database()",
      )
    const [first] = await listener()
    await terminate(url, first!.pid)
    // Opened again by itself (nobody sends meanwhile), listening to the same topic.
    await waitFor(async () => {
      const rows = await listener()
      return rows.length === 1 && rows[0]!.pid !== first!.pid ? true : undefined
    }, 'the LISTEN connection to be opened again')
    await waitFor(async () => {
      await sql(url, "SELECT pg_notify('cuts', 'after')")
      return heard.includes('after') ? true : undefined
    }, 'a notification sent after the cut to be heard')
  })
})
