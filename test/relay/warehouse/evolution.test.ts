import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { WarehouseSender } from '../../../src/relay/destinations/warehouse/sender'
import { freshPostgresDatabase, sql } from '../../support/postgres'
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

function open(source = 'web'): WarehouseSender {
  const sender = warehouse(url, source)
  senders.push(sender)
  return sender
}

async function typesOf(table: string): Promise<Record<string, string>> {
  const rows = await sql<{ column_name: string; data_type: string }>(
    url,
    `SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = 'web' AND table_name = $1`,
    [table],
  )
  return Object.fromEntries(rows.map((row) => [row.column_name, row.data_type]))
}

describe('the warehouse schema as messages change', () => {
  it('adds a column for a new property while it runs, never dropping one', async () => {
    const sender = open()
    await sender.sendBatch(outbound([message('track', { event: 'Viewed', properties: { a: 1 } })]))
    expect(await typesOf('viewed')).not.toHaveProperty('b')
    await sender.sendBatch(
      outbound([message('track', { event: 'Viewed', properties: { b: 'x', at: '2026-01-01T00:00:00Z' } })]),
    )
    expect(await typesOf('viewed')).toMatchObject({ a: 'bigint', b: 'text', at: 'timestamp with time zone' })
    expect(await sql(url, 'SELECT a::int, b FROM web.viewed ORDER BY received_at, id')).toEqual([
      { a: 1, b: null },
      { a: null, b: 'x' },
    ])
  })

  it('casts a value of another type when it can, and stores NULL with a conflict when not', async () => {
    const sender = open()
    await sender.sendBatch(
      outbound([
        message('track', { event: 'Paid', properties: { n: 1, f: 1.5, ok: true, at: '2026-01-01T00:00:00Z', s: 'x' } }),
      ]),
    )
    const later = message('track', { event: 'Paid', properties: { n: '42', f: '2.5', ok: 'false', at: 7, s: 3 } })
    const bad = message('track', { event: 'Paid', properties: { n: 9.99, f: 'lots', ok: 'yes', at: 'soon', s: false } })
    const outcomes = await sender.sendBatch(outbound([later, bad]))
    expect(outcomes[0]).toMatchObject({
      kind: 'delivered',
      detail: { conflicts: [{ table: 'paid', column: 'at', value: 7 }] },
    })
    expect(outcomes[1]).toMatchObject({ kind: 'delivered' })
    const conflicts = outcomes[1]!.kind === 'delivered' ? outcomes[1]!.detail?.conflicts : undefined
    expect(conflicts).toEqual([
      { table: 'paid', column: 'n', value: 9.99 },
      { table: 'paid', column: 'f', value: 'lots' },
      { table: 'paid', column: 'ok', value: 'yes' },
      { table: 'paid', column: 'at', value: 'soon' },
    ])
    const rows = await sql(url, 'SELECT id, n::text, f, ok, at, s FROM web.paid WHERE id = ANY($1) ORDER BY id', [
      [later.messageId, bad.messageId],
    ])
    expect(rows).toEqual([
      { id: later.messageId, n: '42', f: 2.5, ok: false, at: null, s: '3' },
      { id: bad.messageId, n: null, f: null, ok: null, at: null, s: 'false' },
    ])
    // Nothing was retyped.
    expect(await typesOf('paid')).toMatchObject({ n: 'bigint', f: 'double precision', ok: 'boolean', s: 'text' })
  })

  it('keeps one row per message loaded twice (a retry, a replay), in one batch or two', async () => {
    const sender = open()
    const once = message('track', { event: 'Clicked', properties: { x: 1 } })
    expect((await sender.sendBatch(outbound([once, once]))).map((o) => o.kind)).toEqual(['delivered', 'delivered'])
    expect((await sender.sendBatch(outbound([once])))[0]!.kind).toBe('delivered')
    expect(await sql(url, 'SELECT count(*)::int AS n FROM web.clicked')).toEqual([{ n: 1 }])
    expect(await sql(url, 'SELECT count(*)::int AS n FROM web.tracks')).toEqual([{ n: 1 }])
  })

  it('upserts users and groups to their latest traits, keeping traits the newer call left out', async () => {
    const sender = open()
    const t = (minute: number) => `2026-01-02T03:${String(minute).padStart(2, '0')}:00.000Z`
    const first = message('identify', { userId: 'u7', timestamp: t(1), traits: { plan: 'free', email: 'old@x' } })
    const second = message('identify', { userId: 'u7', timestamp: t(2), traits: { plan: 'pro' } })
    // Both in one batch, newest first: one row, the newest value of each trait.
    await sender.sendBatch(outbound([second, first]))
    expect(await sql(url, `SELECT id, plan, email FROM web.users`)).toEqual([{ id: 'u7', plan: 'pro', email: 'old@x' }])
    // An older call arriving late changes no newer value, and fills one that was missing.
    await sender.sendBatch(
      outbound([message('identify', { userId: 'u7', timestamp: t(0), traits: { plan: 'x', seats: 2 } })]),
    )
    expect(await sql(url, `SELECT plan, email, seats::int FROM web.users`)).toEqual([
      { plan: 'pro', email: 'old@x', seats: 2 },
    ])
    await sender.sendBatch(
      outbound([message('identify', { userId: 'u7', timestamp: t(3), traits: { email: 'new@x' } })]),
    )
    expect(await sql(url, `SELECT plan, email FROM web.users`)).toEqual([{ plan: 'pro', email: 'new@x' }])
    expect(await sql(url, 'SELECT count(*)::int AS n FROM web.identifies')).toEqual([{ n: 4 }])

    await sender.sendBatch(
      outbound([message('group', { groupId: 'g1', timestamp: t(1), traits: { name: 'A', size: 1 } })]),
    )
    await sender.sendBatch(outbound([message('group', { groupId: 'g1', timestamp: t(2), traits: { name: 'B' } })]))
    expect(await sql(url, 'SELECT id, group_id, name, size::int FROM web.groups')).toEqual([
      { id: 'g1', group_id: 'g1', name: 'B', size: 1 },
    ])
  })

  it('fails one bad message alone, loading the rest of its batch', async () => {
    const sender = open()
    // A column made by hand with a type the loader never makes: a value it cannot hold is
    // refused by PostgreSQL itself, which the loader finds by loading each message alone.
    await sender.sendBatch(outbound([message('track', { event: 'Rated', properties: { stars: 1 } })]))
    await sql(url, 'ALTER TABLE web.rated ADD COLUMN score smallint')
    const batch = [
      message('track', { event: 'Rated', properties: { stars: 2, score: 5 } }),
      message('track', { event: 'Rated', properties: { stars: 3, score: 100000 } }),
      message('track', { event: 'Rated', properties: { stars: 4, note: 'nul\u0000inside' } }),
      message('identify', { traits: { plan: 'pro' } }),
    ]
    const outcomes = await sender.sendBatch(outbound(batch))
    expect(outcomes.map((o) => o.kind)).toEqual(['delivered', 'failed', 'failed', 'delivered'])
    expect(outcomes[1]).toMatchObject({ retryable: false, error: expect.stringContaining('smallint') })
    expect(outcomes[2]).toMatchObject({ retryable: false, error: expect.stringMatching(/rated\.note .*NUL/) })
    expect(await sql(url, 'SELECT stars::int, score FROM web.rated ORDER BY stars')).toEqual([
      { stars: 1, score: null },
      { stars: 2, score: 5 },
    ])
    expect(await sql(url, 'SELECT plan FROM web.users')).toEqual([{ plan: 'pro' }])
  })

  it('reads the schema again when a table it knew of is gone', async () => {
    const sender = open()
    await sender.sendBatch(outbound([message('track', { event: 'Gone', properties: { a: 1 } })]))
    await sql(url, 'DROP TABLE web.gone')
    const retried = message('track', { event: 'Gone', properties: { a: 2 } })
    const first = await sender.sendBatch(outbound([retried]))
    expect(first[0]).toMatchObject({ kind: 'failed', retryable: true })
    expect((await sender.sendBatch(outbound([retried])))[0]!.kind).toBe('delivered')
    expect(await sql(url, 'SELECT a::int FROM web.gone')).toEqual([{ a: 2 }])
  })
})
