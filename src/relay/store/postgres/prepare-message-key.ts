import type { PoolClient } from 'pg'
import { log } from '../../log'
import { MESSAGE_KEY_EXPRESSION, MESSAGE_KEY_HASH } from './message-key-hash'
import type { PostgresPool } from '../../kit/postgres/pool'
import { underPrepareLock } from './under-prepare-lock'

// The step that makes the messages' key a hash index (./message-key-hash.ts) would hold the
// migration's locks, and ingest with them, while it indexed every retained day. Built here
// beforehand, one partition at a time and `CONCURRENTLY`, it blocks no writer; the step then
// only swaps the names. The parent index is made first `ON ONLY` the messages (invalid, empty):
// a day partition made meanwhile gets its own index with it, and the parent is valid once every
// partition's index is attached.

// This preparation's lock, past the migration lock ("tracklet" in ASCII): three apart from it,
// and apart from the other preparations'.
const PREPARE_LOCK_OFFSET = 3n

/**
 * Builds, without blocking writers, the hash index of the messages' key on a database whose key
 * is still a B-tree. Does nothing on a fresh database or one upgraded already. A partition's
 * build cut short (an invalid index) is dropped and made again.
 */
export async function prepareMessageKey(pool: PostgresPool): Promise<void> {
  await underPrepareLock(pool, PREPARE_LOCK_OFFSET, needed, async (client, long) => {
    log.info('preparing a hash index on the messages’ key (built without blocking writes)', {
      event: 'schema-prepare',
    })
    await long(
      `CREATE INDEX IF NOT EXISTS ${MESSAGE_KEY_HASH} ON ONLY messages
       USING hash (${MESSAGE_KEY_EXPRESSION})`,
    )
    for (const partition of await unattached(client)) {
      const name = `${partition}_key_hash`
      const { rows } = await client.query<{ valid: boolean }>(
        'SELECT indisvalid AS valid FROM pg_index WHERE indexrelid = to_regclass($1)',
        [name],
      )
      if (rows[0]?.valid === false) await long(`DROP INDEX ${name}`)
      if (rows[0]?.valid !== true) {
        await long(`CREATE INDEX CONCURRENTLY ${name} ON ${partition}
          USING hash (${MESSAGE_KEY_EXPRESSION})`)
      }
      await long(`ALTER INDEX ${MESSAGE_KEY_HASH} ATTACH PARTITION ${name}`)
    }
  })
}

// Whether the messages' key is still the B-tree, with no valid hash index beside it.
async function needed(db: Pick<PostgresPool, 'query'>): Promise<boolean> {
  const { rows } = await db.query<{ btree: boolean; hashed: boolean }>(
    `SELECT
       EXISTS (SELECT 1 FROM pg_class c JOIN pg_am a ON a.oid = c.relam
               WHERE c.oid = to_regclass('messages_key') AND a.amname = 'btree') AS btree,
       EXISTS (SELECT 1 FROM pg_index WHERE indexrelid = to_regclass($1) AND indisvalid) AS hashed`,
    [MESSAGE_KEY_HASH],
  )
  return rows[0]?.btree === true && rows[0].hashed === false
}

// The messages' partitions (named as made: the relay's own names) with no index attached to the
// hash index yet.
async function unattached(client: PoolClient): Promise<string[]> {
  const { rows } = await client.query<{ name: string }>(
    `SELECT p.inhrelid::regclass::text AS name FROM pg_inherits p
     WHERE p.inhparent = 'messages'::regclass
       AND NOT EXISTS (
         SELECT 1 FROM pg_inherits i JOIN pg_index x ON x.indexrelid = i.inhrelid
         WHERE i.inhparent = to_regclass($1) AND x.indrelid = p.inhrelid)
     ORDER BY 1`,
    [MESSAGE_KEY_HASH],
  )
  return rows.map((r) => r.name)
}
