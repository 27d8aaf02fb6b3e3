import pg from 'pg'
import { describe, expect, it } from 'vitest'
import { POSTGRES_STATEMENTS as SQL } from '../../../src/relay/store/postgres/statements'
import { freshPostgresDatabase, sql } from '../../support/postgres'
import { openTestStore } from '../../support/stores'
import { waitFor } from '../../support/wait-for'

const delivery = (messageId: string) => ({
  source: 'web',
  destination: 'Webhooks',
  messageId,
  type: 'track',
  json: JSON.stringify({ messageId }),
})

// PostgreSQL only: several relays share the database (a SQLite file has one writer). The store
// looks for a message already written (in any partition: no unique index can span them) before
// inserting it; another relay writing the same new message at once holds its lock until it commits.
describe('enqueue on PostgreSQL, racing another relay', () => {
  it('writes a message the other relay wrote meanwhile once, and keeps the rest of the batch', async () => {
    const url = await freshPostgresDatabase()
    const store = await openTestStore('postgres', Date.now, url)
    const other = new pg.Client({ connectionString: url })
    await other.connect()
    try {
      // The other relay's ingest has written m1 and not yet committed (its statement took its
      // lock on m1's key): this relay's look could not see it.
      await other.query('BEGIN')
      await other.query(SQL.enqueue, [
        ['web'],
        ['Webhooks'],
        ['m1'],
        ['track'],
        '{"messageId":"m1"}',
        [null],
        [null],
        null,
      ])
      const written = store.enqueue([delivery('m1'), delivery('m2')])
      // This relay waits on m1's lock for the other transaction's end, then sees its row: its
      // look-up runs after the lock, on a snapshot of its own (one taken when the statement began
      // would miss it, and write m1 twice).
      await waitFor(async () => {
        const [row] = await sql<{ waiting: number }>(
          url,
          "SELECT count(*)::int AS waiting FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
        )
        return row!.waiting > 0 ? true : undefined
      }, 'the insert to wait for the other relay')
      await other.query('COMMIT')

      expect(await written).toBe(1)
      const log = await store.listNewest({ limit: 10 })
      expect(log.map((d) => d.messageId).sort()).toEqual(['m1', 'm2'])
    } finally {
      await other.end()
      await store.close()
    }
  })

  it('writes a message given twice in one batch once, in the batch’s order', async () => {
    const store = await openTestStore('postgres', Date.now, await freshPostgresDatabase())
    try {
      expect(await store.enqueue([delivery('m1'), delivery('m2'), delivery('m1'), delivery('m0')])).toBe(3)
      const log = await store.listNewest({ limit: 10 })
      expect(log.map((d) => d.messageId)).toEqual(['m0', 'm2', 'm1'])
    } finally {
      await store.close()
    }
  })
})
