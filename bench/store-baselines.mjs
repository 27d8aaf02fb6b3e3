// The ingest baseline of each store: `n` rows of message JSON written in batches of `batch` rows,
// one transaction each, with the durability the relay's ingest has. What a hand-written program
// gets out of the same database; the relay's ingest is reported as a ratio to it.
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import pg from 'pg'

function rowsOf(from, to, message) {
  const rows = []
  for (let j = from; j < to; j++)
    rows.push({ type: 'track', messageId: `m-${j}`, timestamp: new Date().toISOString(), ...message(j) })
  return rows
}

/**
 * SQLite, WAL + synchronous=FULL, one transaction of `batch` single-row inserts per batch. Returns
 * ms. `uniqueMessageId`: give message_id the unique index any outbox needs to skip a batch the
 * client sent again (the relay's is on message id, source and destination); without it, a bare
 * table with no index but its rowid, the harsher comparison, and the one `bench:relay` reports.
 */
export function sqliteInsertBaseline(dir, n, batch, message, { uniqueMessageId = false } = {}) {
  const file = join(dir, 'baseline.db')
  rmSync(file, { force: true })
  const db = new Database(file)
  db.pragma('journal_mode = WAL')
  db.pragma('synchronous = FULL')
  db.exec('CREATE TABLE rows (id INTEGER PRIMARY KEY, message_id TEXT NOT NULL, message TEXT NOT NULL)')
  if (uniqueMessageId) db.exec('CREATE UNIQUE INDEX rows_message_id ON rows (message_id)')
  const insert = db.prepare(
    `INSERT${uniqueMessageId ? ' OR IGNORE' : ''} INTO rows (message_id, message) VALUES (?, ?)`,
  )
  const insertBatch = db.transaction((rows) => {
    for (const row of rows) insert.run(row.messageId, JSON.stringify(row))
  })
  const started = performance.now()
  for (let i = 0; i < n; i += batch) insertBatch(rowsOf(i, Math.min(n, i + batch), message))
  const ms = performance.now() - started
  db.close()
  return ms
}

/**
 * PostgreSQL, the server's default durability (synchronous_commit on): one multi-row INSERT
 * (unnest of two arrays) of `batch` rows per statement, on `connections` connections at once.
 * Returns ms.
 */
export async function postgresInsertBaseline(url, n, batch, message, connections) {
  const setup = new pg.Client({ connectionString: url })
  await setup.connect()
  await setup.query('DROP TABLE IF EXISTS baseline_rows')
  await setup.query(
    'CREATE TABLE baseline_rows (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, message_id text NOT NULL, message text NOT NULL)',
  )
  await setup.end()
  const clients = await Promise.all(
    Array.from({ length: connections }, async () => {
      const client = new pg.Client({ connectionString: url })
      await client.connect()
      return client
    }),
  )
  let next = 0
  const started = performance.now()
  await Promise.all(
    clients.map(async (client) => {
      for (;;) {
        const i = next
        next += batch
        if (i >= n) break
        const rows = rowsOf(i, Math.min(n, i + batch), message)
        await client.query({
          name: 'baseline-insert',
          text: 'INSERT INTO baseline_rows (message_id, message) SELECT * FROM unnest($1::text[], $2::text[])',
          values: [rows.map((r) => r.messageId), rows.map((r) => JSON.stringify(r))],
        })
      }
    }),
  )
  const ms = performance.now() - started
  await Promise.all(clients.map((c) => c.end()))
  return ms
}
