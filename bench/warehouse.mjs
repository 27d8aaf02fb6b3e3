// The warehouse's load rate against a raw COPY of the same rows into the same tables, side by
// side on one PostgreSQL server (its default durability): rows/s, the loader's CPU per row (its
// process) and the server's CPU per row. A third candidate, COPY into a temporary staging table
// then INSERT … ON CONFLICT, is the other way to load idempotently (docs/warehouse.md says which
// was taken, with these figures).
// Usage: node bench/warehouse.mjs [--messages 40000] [--batch 10000] [--rounds 2]
import { writeFileSync } from 'node:fs'
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { parseArgs } from 'node:util'
import pg from 'pg'
import { from as copyFrom } from 'pg-copy-streams'
import { startPostgresServer } from '../test/support/postgres-server.mjs'
import { measureServer } from './pg-server-cost.mjs'
import { loadWarehouse } from './warehouse-bundle.mjs'

const { values: args } = parseArgs({
  options: {
    messages: { type: 'string', default: '40000' },
    batch: { type: 'string', default: '10000' },
    rounds: { type: 'string', default: '2' },
  },
})
const MESSAGES = Number(args.messages)
const BATCH = Number(args.batch)
const ROUNDS = Number(args.rounds)
const EVENTS = ['Order Completed', 'Product Viewed', 'Signed Up', 'Cart Updated', 'Search']

const wh = await loadWarehouse()
const server = await startPostgresServer({ durable: true })
try {
  const url = await server.createDatabase()
  const schemas = ['loader', 'raw', 'staged']
  const senders = Object.fromEntries(
    schemas.map((schema) => [
      schema,
      wh.createWarehouseSender(wh.parseWarehouseSettings({ url, schema }, 'Warehouse'), { source: 'bench' }),
    ]),
  )
  // The same tables in each schema: the loader makes them from a first batch, then all are emptied.
  for (const schema of schemas) await senders[schema].sendBatch(batchOf(0, 200, 'warm'))
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  const columns = await columnsOf(client, 'raw')
  const totals = { loader: [], raw: [], staged: [] }
  for (let round = 0; round < ROUNDS; round++) {
    await truncate(client, schemas)
    const batches = []
    for (let i = 0; i < MESSAGES; i += BATCH) batches.push(batchOf(i, Math.min(MESSAGES, i + BATCH), `r${round}`))
    // The raw COPY starts from rows already flattened and cast: only writing them is measured.
    const prepared = batches.map((batch) => prepare(batch, columns))
    totals.loader.push(
      await measure(async () => {
        for (const batch of batches) check(await senders.loader.sendBatch(batch))
      }),
    )
    totals.raw.push(await measure(() => eachInTurn(prepared, (rows) => rawCopy(client, 'raw', rows, columns))))
    totals.staged.push(
      await measure(() =>
        eachInTurn(batches, (batch) => stagedCopy(client, 'staged', prepare(batch, columns), columns)),
      ),
    )
  }
  const rows = MESSAGES * 2
  const report = (name, runs) => {
    const best = runs.reduce((a, b) => (a.ms < b.ms ? a : b))
    return {
      name,
      'rows/s': Math.round(rows / (best.ms / 1000)),
      'rows/s per client core': Math.round(rows / (best.clientMs / 1000)),
      'client CPU µs/row': ((best.clientMs * 1000) / rows).toFixed(1),
      'server CPU µs/row': ((best.serverMs * 1000) / rows).toFixed(1),
      'WAL bytes/row': Math.round(best.walBytes / rows),
    }
  }
  const table = [report('loader (unnest, ON CONFLICT)', totals.loader), report('raw COPY', totals.raw)]
  table.push(report('COPY to staging + INSERT ON CONFLICT', totals.staged))
  console.log(
    `${MESSAGES} track messages (${rows} rows: tracks + the event's table), batches of ${BATCH}, best of ${ROUNDS}`,
  )
  console.table(table)
  console.log(`loader ÷ raw COPY (rows/s): ${(table[0]['rows/s'] / table[1]['rows/s']).toFixed(2)}`)
  console.log(`staging ÷ raw COPY (rows/s): ${(table[2]['rows/s'] / table[1]['rows/s']).toFixed(2)}`)
  // For bench/relay-issue.mjs, which sets BENCH_JSON.
  if (process.env.BENCH_JSON) writeFileSync(process.env.BENCH_JSON, JSON.stringify({ table }))
  await client.end()
  for (const sender of Object.values(senders)) await sender.close()
} finally {
  await server.stop()
}

function batchOf(from, to, tag) {
  const batch = []
  for (let i = from; i < to; i++) {
    const event = EVENTS[i % EVENTS.length]
    batch.push({
      deliveryId: i,
      source: 'bench',
      message: {
        receivedAt: new Date(Date.UTC(2026, 0, 1, 0, 0, i % 60)).toISOString(),
        sentAt: new Date(Date.UTC(2026, 0, 1, 0, 0, i % 60)).toISOString(),
        type: 'track',
        messageId: `${tag}-${i}`,
        timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, i % 60)).toISOString(),
        userId: `user-${i % 1000}`,
        event,
        properties: {
          orderId: `o-${i}`,
          revenue: (i % 1000) / 10 + 0.5,
          quantity: i % 7,
          currency: 'EUR',
          coupon: i % 3 === 0 ? 'SPRING' : null,
          firstOrder: i % 2 === 0,
          product: { sku: `sku-${i % 50}`, category: 'shoes' },
        },
        context: {
          library: { name: 'tracklet', version: '0.1.0' },
          ip: '203.0.113.7',
          page: { url: `https://shop.example/p/${i % 50}`, path: `/p/${i % 50}` },
          userAgent: 'Mozilla/5.0 (X11; Linux x86_64)',
        },
      },
    })
  }
  return batch
}

function check(outcomes) {
  const failed = outcomes.find((outcome) => outcome.kind !== 'delivered')
  if (failed) throw new Error(`a load failed: ${failed.error}`)
}

async function columnsOf(client, schema) {
  const { rows } = await client.query(wh.READ_COLUMNS, [schema, null])
  const tables = new Map()
  for (const row of rows) {
    if (!tables.has(row.table)) tables.set(row.table, new Map())
    tables.get(row.table).set(row.column, wh.columnTypeOf(row.type))
  }
  return tables
}

async function truncate(client, schemas) {
  for (const schema of schemas) {
    const { rows } = await client.query('SELECT tablename FROM pg_tables WHERE schemaname = $1', [schema])
    await client.query(`TRUNCATE ${rows.map((r) => `${schema}.${wh.quote(r.tablename)}`).join(', ')}`)
  }
  await client.query('CHECKPOINT')
}

// A batch's rows flattened and cast to the tables' types, grouped by table.
function prepare(batch, columns) {
  const byTable = new Map()
  const loadedAt = new Date().toISOString()
  for (const item of batch) {
    const at = { loadedAt }
    for (const row of wh.rowsOf(item.message, at, wh.POSTGRES_RESERVED_COLUMNS)) {
      const coerced = wh.coerceRow(row, columns.get(row.table))
      if (!byTable.has(row.table)) byTable.set(row.table, [])
      byTable.get(row.table).push(coerced.values)
    }
  }
  return byTable
}

function csvOf(rows, names) {
  let text = ''
  for (const values of rows) {
    text += names
      .map((name) => {
        const value = values.get(name)
        if (value === null || value === undefined) return ''
        if (typeof value !== 'string') return String(value)
        return `"${value.replaceAll('"', '""')}"`
      })
      .join(',')
    text += '\n'
  }
  return text
}

async function copyInto(client, target, rows, names) {
  const list = names.map(wh.quote).join(', ')
  const stream = client.query(copyFrom(`COPY ${target} (${list}) FROM STDIN WITH (FORMAT csv)`))
  await pipeline(Readable.from([csvOf(rows, names)]), stream)
}

async function rawCopy(client, schema, byTable, columns) {
  await client.query('BEGIN')
  for (const [table, rows] of byTable) {
    await copyInto(client, `${schema}.${wh.quote(table)}`, rows, [...columns.get(table).keys()])
  }
  await client.query('COMMIT')
}

async function stagedCopy(client, schema, byTable, columns) {
  await client.query('BEGIN')
  for (const [table, rows] of byTable) {
    const names = [...columns.get(table).keys()]
    const stage = wh.quote(`stage_${table}`)
    await client.query(
      `CREATE TEMP TABLE ${stage} (LIKE ${schema}.${wh.quote(table)} INCLUDING DEFAULTS) ON COMMIT DROP`,
    )
    await copyInto(client, stage, rows, names)
    const list = names.map(wh.quote).join(', ')
    await client.query(
      `INSERT INTO ${schema}.${wh.quote(table)} (${list}) SELECT ${list} FROM ${stage} ON CONFLICT ("id") DO NOTHING`,
    )
  }
  await client.query('COMMIT')
}

async function eachInTurn(items, work) {
  for (const item of items) await work(item)
}

async function measure(work) {
  const serverCost = await measureServer(server)
  const cpu = process.cpuUsage()
  const started = performance.now()
  await work()
  const ms = performance.now() - started
  const used = process.cpuUsage(cpu)
  const { cpuMs, walBytes } = await serverCost.stop()
  return { ms, clientMs: (used.user + used.system) / 1000, serverMs: cpuMs, walBytes }
}
