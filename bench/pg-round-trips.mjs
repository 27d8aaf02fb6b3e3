// Counts the relay's statements on PostgreSQL, by kind, from pg_stat_statements (the server is
// started with it preloaded). Every statement the relay makes is one round trip (one
// Parse/Bind/Execute/Sync exchange, or a named statement's Bind/Execute/Sync).
import pg from 'pg'

// Each kind by a fragment of its SQL (src/relay/store/postgres/postgres-store.ts).
const KINDS = [
  ['claim', 'SET lease_until = clock.now + $5'],
  ['record', 'outcome AS ('],
  ['renew', 'SET lease_until = clock.now + $3'],
  ['release', 'SET lease_until = NULL, lease_owner = NULL\n  WHERE id = ANY'],
  ['nextDue', 'SELECT least('],
  ['enqueue', 'INSERT INTO queue (id, created_at, source, destination, status, next_attempt_at'],
  // Ingest's write as one function call (schema 7 on): its statements run inside the function.
  ['enqueue', 'tracklet_enqueue('],
  ['prune', 'WITH gone AS'],
]
/** The kinds that deliver (the rest is ingest and housekeeping). */
export const DELIVERY_KINDS = ['claim', 'record', 'renew', 'release', 'nextDue']

export async function resetStatements(url) {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  await client.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements')
  await client.query('SELECT pg_stat_statements_reset()')
  await client.end()
}

/** Calls per kind since the last reset, in the database `url` names. */
export async function countStatements(url) {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  const { rows } = await client.query(
    `SELECT query, calls::int AS calls FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid
     WHERE d.datname = current_database()`,
  )
  await client.end()
  const counts = Object.fromEntries([...KINDS.map(([kind]) => [kind, 0]), ['other', 0]])
  for (const { query, calls } of rows) {
    if (query.includes('pg_stat_statements')) continue
    const kind = KINDS.find(([, fragment]) => query.includes(fragment))?.[0] ?? 'other'
    counts[kind] += calls
  }
  return counts
}

/**
 * The server's time per kind of statement since the last reset, in the database `url` names
 * (pg_stat_statements' execution time, planning excluded: the relay's statements are prepared),
 * most first. A statement of no known kind (the peer's, housekeeping) goes by its first words.
 */
export async function statementTimes(url) {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  const { rows } = await client.query(
    `SELECT query, calls::int AS calls, total_exec_time AS ms FROM pg_stat_statements s
     JOIN pg_database d ON d.oid = s.dbid WHERE d.datname = current_database()`,
  )
  await client.end()
  const byKind = new Map()
  for (const { query, calls, ms } of rows) {
    if (query.includes('pg_stat_statements')) continue
    const kind =
      KINDS.find(([, fragment]) => query.includes(fragment))?.[0] ?? query.replace(/\s+/g, ' ').trim().slice(0, 48)
    const entry = byKind.get(kind) ?? { kind, calls: 0, ms: 0 }
    entry.calls += calls
    entry.ms += ms
    byKind.set(kind, entry)
  }
  return [...byKind.values()].sort((a, b) => b.ms - a.ms)
}
