// Where a phase's WAL goes on PostgreSQL: bytes per message by relation (the deliveries heap, each
// index, attempts, …) and by kind of record (insert, HOT update, update, index insert, full-page
// image, commit, …), read back from the WAL itself with pg_walinspect (shipped with PostgreSQL,
// created in the admin database; it reads the whole cluster's WAL, so it measures any database).
//
// As a module, around a phase of another bench (bench/relay.mjs):
//   const wal = await startWalBreakdown(server, databaseUrl)   // server from postgres-server.mjs
//   … the phase …
//   printWalBreakdown('delivery only', await wal.stop(), messages)
//
// As a command, it drives the store itself on a fresh server (durable, as the relay bench runs
// it): ingest only (enqueue in batches of 100), then delivery only (claim 64 at a time, each
// delivered by one request, outcomes recorded in batches), then both interleaved, each measured
// alone. The store's statements are the relay's; what the relay adds around them (lease renewals
// of long attempts, its timing) is not here, so use the module in bench/relay.mjs for its figures.
//
//   node bench/pg-wal-breakdown.mjs                 20,000 messages
//   node bench/pg-wal-breakdown.mjs --messages 50000
//   BENCH_IDS=random node bench/pg-wal-breakdown.mjs   the SDK's UUID message ids (default: ordered ids)
import { randomUUID } from 'node:crypto'
import { pathToFileURL } from 'node:url'
import { parseArgs } from 'node:util'
import pg from 'pg'

// Per record: its kind, the relation of its first block (none: commits, running-xacts, …), its
// length without full-page images, and the images' length. Relations are named in the measured
// database (relfilenode is per database), by pg_filenode_relation in `nameRelations` below.
const RECORDS = `
  WITH r AS (
    SELECT start_lsn, resource_manager, record_type, record_length, fpi_length
    FROM pg_get_wal_records_info($1::pg_lsn, $2::pg_lsn)
  ), b AS (
    SELECT DISTINCT ON (start_lsn) start_lsn, reldatabase, reltablespace, relfilenode
    FROM pg_get_wal_block_info($1::pg_lsn, $2::pg_lsn, false)
    ORDER BY start_lsn, block_id
  )
  SELECT r.resource_manager || '/' || split_part(r.record_type, '+', 1) AS kind,
    b.reldatabase::text AS database, b.reltablespace::text AS tablespace, b.relfilenode::text AS filenode,
    count(*)::int AS records, sum(r.record_length - r.fpi_length)::bigint AS bytes,
    sum(r.fpi_length)::bigint AS fpi_bytes, count(*) FILTER (WHERE r.fpi_length > 0)::int AS fpi_records
  FROM r LEFT JOIN b USING (start_lsn)
  GROUP BY 1, 2, 3, 4`

async function withClient(url, work) {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return await work(client)
  } finally {
    await client.end()
  }
}

/**
 * Starts reading the WAL written from now on (`server`: `{ adminUrl }` from
 * test/support/postgres-server.mjs; `databaseUrl`: the measured database, as `createDatabase` gives it). `stop()` resolves
 * with the breakdown since, for {@link printWalBreakdown}.
 */
export async function startWalBreakdown(server, databaseUrl) {
  const from = await withClient(server.adminUrl, async (client) => {
    await client.query('CREATE EXTENSION IF NOT EXISTS pg_walinspect')
    // The insert position at both ends, so the total counts exactly the records written between
    // (pg_current_wal_lsn() is where the WAL was last written out to, which lags behind it).
    return (await client.query('SELECT pg_current_wal_insert_lsn()::text AS lsn')).rows[0].lsn
  })
  return {
    async stop() {
      return withClient(server.adminUrl, async (client) => {
        // A record still being written at the end is left out of both the records and the total.
        const to = (await client.query('SELECT pg_current_wal_insert_lsn()::text AS lsn')).rows[0].lsn
        const total = Number((await client.query('SELECT pg_wal_lsn_diff($1, $2)::bigint AS b', [to, from])).rows[0].b)
        const { rows } = await client.query(RECORDS, [from, to])
        const names = await nameRelations(databaseUrl, rows)
        return { totalBytes: total, rows: rows.map((row) => ({ ...row, relation: names(row) })) }
      })
    },
  }
}

// A name for each row's relation: the measured database's tables and indexes by name, another
// database's as "(another database)", a record without blocks as "(no relation)".
async function nameRelations(databaseUrl, rows) {
  return withClient(databaseUrl, async (client) => {
    const oid = Number(
      (await client.query('SELECT oid FROM pg_database WHERE datname = current_database()')).rows[0].oid,
    )
    const pairs = [...new Set(rows.filter((r) => r.filenode !== null).map((r) => `${r.tablespace}/${r.filenode}`))]
    // pg_filenode_relation names the database's default tablespace 0.
    const { rows: named } = await client.query(
      `SELECT p.pair, pg_filenode_relation(
           CASE WHEN t.oid = (SELECT dattablespace FROM pg_database WHERE datname = current_database()) THEN 0 ELSE t.oid END,
           split_part(p.pair, '/', 2)::oid)::regclass::text AS name
       FROM unnest($1::text[]) AS p (pair) JOIN pg_tablespace t ON t.oid = split_part(p.pair, '/', 1)::oid`,
      [pairs],
    )
    const byPair = new Map(named.map((n) => [n.pair, n.name ?? '(dropped or catalog)']))
    return (row) => {
      if (row.filenode === null) return '(no relation)'
      if (Number(row.database) !== oid) return Number(row.database) === 0 ? '(shared catalog)' : '(another database)'
      return byPair.get(`${row.tablespace}/${row.filenode}`) ?? '(unknown)'
    }
  })
}

function sumBy(rows, keyOf) {
  const groups = new Map()
  for (const row of rows) {
    const key = keyOf(row)
    const g = groups.get(key) ?? { key, records: 0, bytes: 0, fpiBytes: 0, fpiRecords: 0 }
    g.records += row.records
    g.bytes += Number(row.bytes)
    g.fpiBytes += Number(row.fpi_bytes)
    g.fpiRecords += row.fpi_records
    groups.set(key, g)
  }
  return [...groups.values()].sort((a, b) => b.bytes + b.fpiBytes - (a.bytes + a.fpiBytes))
}

/**
 * The breakdown as rows of bytes per message: by relation, by kind of record, and the full-page
 * images' share (the rest of the total is record alignment and page headers).
 */
export function summariseWal(breakdown, messages) {
  const per = (n) => n / messages
  const recordBytes = breakdown.rows.reduce((s, r) => s + Number(r.bytes) + Number(r.fpi_bytes), 0)
  const fpiBytes = breakdown.rows.reduce((s, r) => s + Number(r.fpi_bytes), 0)
  const shape = (g) => ({
    name: g.key,
    records: per(g.records),
    bytes: per(g.bytes),
    fpiBytes: per(g.fpiBytes),
  })
  return {
    total: per(breakdown.totalBytes),
    fpi: per(fpiBytes),
    padding: per(breakdown.totalBytes - recordBytes),
    byRelation: sumBy(breakdown.rows, (r) => r.relation).map(shape),
    byKind: sumBy(breakdown.rows, (r) => r.kind).map(shape),
  }
}

/** Prints {@link summariseWal}'s tables under `title`. */
export function printWalBreakdown(title, breakdown, messages) {
  const s = summariseWal(breakdown, messages)
  const n = (x, digits = 0) =>
    x.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits })
  console.log(
    `\n${title}: ${n(s.total)} bytes of WAL per message (full-page images ${n(s.fpi)}, alignment and page headers ${n(s.padding)})`,
  )
  for (const [heading, list] of [
    ['relation', s.byRelation],
    ['kind of record', s.byKind],
  ]) {
    console.log(
      `  ${heading.padEnd(34)} ${'bytes/msg'.padStart(10)} ${'FPI/msg'.padStart(9)} ${'records/msg'.padStart(12)}`,
    )
    for (const g of list) {
      if (g.bytes + g.fpiBytes < 0.5 && g.records < 0.01) continue
      console.log(
        `  ${g.name.padEnd(34)} ${n(g.bytes).padStart(10)} ${n(g.fpiBytes).padStart(9)} ${n(g.records, 2).padStart(12)}`,
      )
    }
  }
}

// --- The command: the store's own statements on a fresh server. ---

// The store is internal: bundled from the source (the module only when the command runs).
async function loadPostgresStore() {
  const { importSource } = await import('./load-source.mjs')
  return (await importSource(`export { openPostgresStore } from './src/relay/store/postgres/postgres-store'`))
    .openPostgresStore
}

// A message as the relay stores it: what the SDK sent (bench/relay.mjs's shape) plus the relay's fields.
function newDelivery(prefix, i) {
  const message = {
    type: 'track',
    messageId: RANDOM_IDS ? randomUUID() : `${prefix}-${i}`,
    timestamp: new Date().toISOString(),
    userId: `user-${i % 5000}`,
    event: 'Order Completed',
    properties: { orderId: `o-${i}`, revenue: 9.99, currency: 'EUR', items: ['a', 'b'] },
    receivedAt: new Date().toISOString(),
    sentAt: new Date().toISOString(),
    context: { library: { name: 'tracklet', version: '0.0.0' } },
  }
  return {
    source: 'bench',
    destination: 'Webhooks',
    messageId: message.messageId,
    type: 'track',
    json: JSON.stringify(message),
  }
}

// The SDK's ids are random UUIDs (BENCH_IDS=random): index entries land anywhere, not at the end.
const RANDOM_IDS = process.env.BENCH_IDS === 'random'

async function ingest(store, prefix, from, to) {
  for (let i = from; i < to; i += 100) {
    const batch = []
    for (let j = i; j < Math.min(to, i + 100); j++) batch.push(newDelivery(prefix, j))
    await store.enqueue(batch)
  }
}

// Claims 64 at a time and records each claim's outcomes in two batches, as the outcome writer
// (every 5 ms) would: each delivered by one 200 in 3 ms.
async function deliver(store, count) {
  let delivered = 0
  while (delivered < count) {
    const due = await store.claim({ source: 'bench', limit: 64, owner: 'wal-bench', leaseMs: 30_000 })
    if (due.length === 0) throw new Error(`nothing due after ${delivered} of ${count}`)
    const at = Date.now()
    const outcomes = due.map((d) => ({
      id: d.id,
      at,
      requests: [{ url: 'http://127.0.0.1:9/hook', status: 200, ms: 3 }],
      next: { status: 'delivered' },
    }))
    const half = Math.ceil(outcomes.length / 2)
    await store.record(outcomes.slice(0, half))
    await store.record(outcomes.slice(half))
    delivered += due.length
  }
}

async function main() {
  const { values: args } = parseArgs({ options: { messages: { type: 'string' } } })
  const N = Number(args.messages ?? 20_000)
  const { startPostgresServer } = await import('../test/support/postgres-server.mjs')
  const openPostgresStore = await loadPostgresStore()
  const server = await startPostgresServer({ durable: true })
  try {
    const database = await server.createDatabase('wal_breakdown')
    const store = await openPostgresStore(database)
    try {
      console.log(`PostgreSQL WAL per message, the store driven directly, ${N.toLocaleString('en-US')} messages`)
      let wal = await startWalBreakdown(server, database)
      await ingest(store, 'alone', 0, N)
      printWalBreakdown('ingest only', await wal.stop(), N)

      wal = await startWalBreakdown(server, database)
      await deliver(store, N)
      printWalBreakdown('delivery only', await wal.stop(), N)

      // Both: a batch in, then what is due out, as a relay keeping up with its ingest does.
      wal = await startWalBreakdown(server, database)
      for (let i = 0; i < N; i += 640) {
        await ingest(store, 'both', i, Math.min(N, i + 640))
        await deliver(store, Math.min(N, i + 640) - i)
      }
      printWalBreakdown('both, interleaved', await wal.stop(), N)
    } finally {
      await store.close()
    }
  } finally {
    await server.stop()
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await main()
