import pg from 'pg'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { WarehouseSender } from '../../../src/relay/destinations/warehouse/sender'
import { freshPostgresDatabase, sql } from '../../support/postgres'
import { waitFor } from '../../support/wait-for'
import { startTcpProxy, type TcpProxy } from '../../support/tcp-proxy'
import { message, outbound, warehouse } from './warehouse-fixtures'

let url: string
let senders: WarehouseSender[]

beforeEach(async () => {
  url = await freshPostgresDatabase()
  senders = []
})

afterEach(async () => {
  await Promise.all(senders.map((sender) => sender.close()))
})

function open(at = url, source = 'web'): WarehouseSender {
  const sender = warehouse(at, source)
  senders.push(sender)
  return sender
}

describe('a warehouse shared and out of reach', () => {
  it('lets two loaders add the same tables and columns at once, neither failing', async () => {
    const [a, b] = [open(), open()]
    for (let round = 0; round < 4; round++) {
      const batchOf = (who: string) =>
        outbound(
          Array.from({ length: 20 }, (_, i) =>
            message('track', {
              event: `Race ${round}`,
              properties: { [`p${round}_${i % 5}`]: i, [`q${round}`]: who },
              context: { [`c${round}`]: true },
            }),
          ),
        )
      const [first, second] = await Promise.all([a.sendBatch(batchOf('a')), b.sendBatch(batchOf('b'))])
      expect([...first, ...second].every((outcome) => outcome.kind === 'delivered')).toBe(true)
    }
    expect(await sql(url, 'SELECT count(*)::int AS n FROM web.tracks')).toEqual([{ n: 160 }])
    expect(await sql(url, 'SELECT count(*)::int AS n FROM web.race_3 WHERE p3_4 IS NOT NULL')).toEqual([{ n: 8 }])
  })

  it('takes a table or schema another loader created at the same moment as its own', async () => {
    // Another loader's CREATE, held uncommitted: both loaders here pass IF NOT EXISTS, wait on
    // the catalog's unique index, and see a duplicate once it commits.
    const other = new pg.Client({ connectionString: url })
    await other.connect()
    try {
      await other.query('BEGIN')
      await other.query('CREATE SCHEMA web')
      await other.query('CREATE TABLE web.tracks (id text PRIMARY KEY)')
      const loads = [open(), open()].map((sender) =>
        sender.sendBatch(outbound([message('track', { event: 'Same', properties: { a: 1 } })])),
      )
      await waitFor(async () => {
        const [row] = await sql<{ n: number }>(
          url,
          `SELECT count(*)::int AS n FROM pg_stat_activity
           WHERE datname = current_database() AND wait_event_type = 'Lock'`,
        )
        return row!.n >= 2 ? true : undefined
      }, 'both loaders waiting on the uncommitted CREATE')
      await other.query('COMMIT')
      const outcomes = (await Promise.all(loads)).flat()
      expect(outcomes.map((o) => o.kind)).toEqual(['delivered', 'delivered'])
    } finally {
      await other.end()
    }
    expect(await sql(url, 'SELECT count(*)::int AS n FROM web.tracks WHERE event = $1', ['same'])).toEqual([{ n: 2 }])
  })

  it('gives up a new column when a reader holds the table, rather than queueing every query behind it', async () => {
    const sender = open()
    await sender.sendBatch(outbound([message('track', { event: 'Read', properties: { a: 1 } })]))
    const reader = new pg.Client({ connectionString: url })
    await reader.connect()
    try {
      await reader.query('BEGIN')
      await reader.query('SELECT count(*) FROM web.read')
      const batch = outbound([message('track', { event: 'Read', properties: { b: 'new' } })])
      const held = await sender.sendBatch(batch)
      expect(held[0]).toMatchObject({ kind: 'failed', retryable: true, error: expect.stringContaining('lock timeout') })
      await reader.query('COMMIT')
      expect((await sender.sendBatch(batch))[0]!.kind).toBe('delivered')
    } finally {
      await reader.end()
    }
  })

  it('works with a role that has only CONNECT on the database and USAGE and CREATE on its schema', async () => {
    const database = new URL(url).pathname.slice(1)
    const role = `loader_${database}`
    await sql(url, `CREATE ROLE ${role} LOGIN PASSWORD 'loader-pass'`)
    await sql(url, `REVOKE ALL ON DATABASE ${database} FROM PUBLIC`)
    await sql(url, `REVOKE ALL ON SCHEMA public FROM PUBLIC`)
    await sql(url, `GRANT CONNECT ON DATABASE ${database} TO ${role}`)
    await sql(url, `CREATE SCHEMA web`)
    await sql(url, `GRANT USAGE, CREATE ON SCHEMA web TO ${role}`)
    const asLoader = new URL(url)
    asLoader.username = role
    asLoader.password = 'loader-pass'
    const sender = open(asLoader.toString())
    const outcomes = await sender.sendBatch(
      outbound([
        message('track', { event: 'Granted', properties: { a: 1 } }),
        message('identify', { traits: { b: 2 } }),
      ]),
    )
    expect(outcomes.map((o) => o.kind)).toEqual(['delivered', 'delivered'])
    const more = await sender.sendBatch(outbound([message('track', { event: 'Granted', properties: { c: 'new' } })]))
    expect(more[0]!.kind).toBe('delivered')
    expect(await sql(url, 'SELECT count(*)::int AS n FROM web.granted')).toEqual([{ n: 2 }])
    // The role could not have made the schema itself: without it, the load is refused and retried.
    const other = open(asLoader.toString(), 'app')
    const refused = await other.sendBatch(outbound([message('track', { event: 'X' })]))
    expect(refused[0]).toMatchObject({
      kind: 'failed',
      retryable: true,
      error: expect.stringContaining('permission denied'),
    })
  })

  describe('with the warehouse down', () => {
    let proxy: TcpProxy
    beforeEach(async () => {
      proxy = await startTcpProxy(Number(new URL(url).port))
    })
    afterEach(async () => {
      await proxy.close()
    })

    it('fails the batch as retryable while it is down, and loads it whole once it is back', async () => {
      const through = new URL(url)
      through.port = String(proxy.port)
      const sender = open(through.toString())
      const first = await sender.sendBatch(outbound([message('track', { event: 'Before', properties: { a: 1 } })]))
      expect(first[0]!.kind).toBe('delivered')
      await proxy.cut()
      const batch = outbound([message('track', { event: 'During', properties: { a: 2 } }), message('identify', {})])
      const down = await sender.sendBatch(batch)
      expect(down).toHaveLength(2)
      for (const outcome of down) expect(outcome).toMatchObject({ kind: 'failed', retryable: true })
      // The password never reaches an outcome.
      expect(JSON.stringify(down)).not.toContain(new URL(url).password)
      await proxy.restore()
      const back = await sender.sendBatch(batch)
      expect(back.map((o) => o.kind)).toEqual(['delivered', 'delivered'])
      expect(await sql(url, 'SELECT a::int FROM web.during')).toEqual([{ a: 2 }])
    })
  })
})
