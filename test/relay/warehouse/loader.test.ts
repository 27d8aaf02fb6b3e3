import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { freshPostgresDatabase, sql } from '../../support/postgres'
import { message, outbound, warehouse } from './warehouse-fixtures'
import type { WarehouseSender } from '../../../src/relay/destinations/warehouse/sender'

let url: string
let senders: WarehouseSender[]

beforeEach(async () => {
  url = await freshPostgresDatabase()
  senders = []
})

afterEach(async () => {
  await Promise.all(senders.map((sender) => sender.close()))
})

function open(source = 'web', extra: Record<string, unknown> = {}): WarehouseSender {
  const sender = warehouse(url, source, extra)
  senders.push(sender)
  return sender
}

async function columnsOf(schema: string, table: string): Promise<Record<string, string>> {
  const rows = await sql<{ column_name: string; data_type: string }>(
    url,
    'SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = $1 AND table_name = $2',
    [schema, table],
  )
  return Object.fromEntries(rows.map((row) => [row.column_name, row.data_type]))
}

describe('the PostgreSQL warehouse', () => {
  it('loads every call type into its table', async () => {
    const sender = open()
    const batch = [
      message('track', { event: 'Order Completed', properties: { orderTotal: 9.99, items: 3 } }),
      message('identify', { traits: { email: 'a@b.co', plan: 'pro' } }),
      message('page', { name: 'Pricing', properties: { url: 'https://x.test/p', title: 'P' } }),
      message('screen', { name: 'Home', category: 'main' }),
      message('group', { groupId: 'acme', traits: { name: 'Acme', employees: 120 } }),
      message('alias', { previousId: 'anon-7' }),
    ]
    const outcomes = await sender.sendBatch(outbound(batch))
    expect(outcomes.map((o) => o.kind)).toEqual(Array(6).fill('delivered'))

    const [track] = await sql(url, 'SELECT * FROM web.tracks')
    expect(track).toMatchObject({ id: batch[0]!.messageId, event: 'order_completed', event_text: 'Order Completed' })
    const [order] = await sql(url, 'SELECT * FROM web.order_completed')
    // pg reads bigint as text.
    expect(order).toMatchObject({ order_total: 9.99, items: '3', user_id: 'u1' })
    expect(order!['received_at']).toEqual(new Date('2026-01-02T03:04:06.000Z'))
    expect(order!['sent_at']).toEqual(new Date('2026-01-02T03:04:05.900Z'))
    expect(order!['timestamp']).toEqual(new Date('2026-01-02T03:04:05.678Z'))
    expect(await sql(url, 'SELECT id, email, plan FROM web.identifies')).toEqual([
      { id: batch[1]!.messageId, email: 'a@b.co', plan: 'pro' },
    ])
    expect(await sql(url, 'SELECT id, email, plan FROM web.users')).toEqual([
      { id: 'u1', email: 'a@b.co', plan: 'pro' },
    ])
    expect(await sql(url, 'SELECT name, url, title FROM web.pages')).toEqual([
      { name: 'Pricing', url: 'https://x.test/p', title: 'P' },
    ])
    expect(await sql(url, 'SELECT name, category FROM web.screens')).toEqual([{ name: 'Home', category: 'main' }])
    expect(await sql(url, 'SELECT id, group_id, name, employees FROM web.groups')).toEqual([
      { id: 'acme', group_id: 'acme', name: 'Acme', employees: '120' },
    ])
    expect(await sql(url, 'SELECT previous_id, user_id FROM web.aliases')).toEqual([
      { previous_id: 'anon-7', user_id: 'u1' },
    ])
    expect(await columnsOf('web', 'order_completed')).toMatchObject({
      id: 'text',
      received_at: 'timestamp with time zone',
      uuid_ts: 'timestamp with time zone',
      order_total: 'double precision',
      items: 'bigint',
    })
  })

  it('flattens properties, traits and context with _ in snake_case', async () => {
    const sender = open()
    const track = message('track', {
      event: 'Signed Up',
      properties: { planDetails: { monthlyPrice: 12, trial: true }, tags: ['a', 'b'], empty: null },
      context: { page: { url: 'https://x.test/' }, library: { name: 'tracklet', version: '1' } },
    })
    expect((await sender.sendBatch(outbound([track])))[0]!.kind).toBe('delivered')
    const [row] = await sql(url, 'SELECT * FROM web.signed_up')
    expect(row).toMatchObject({
      plan_details_monthly_price: '12',
      plan_details_trial: true,
      tags: '["a","b"]',
      context_page_url: 'https://x.test/',
      context_library_name: 'tracklet',
    })
    expect(row).not.toHaveProperty('empty')
    const [tracks] = await sql(url, 'SELECT * FROM web.tracks')
    expect(tracks).toMatchObject({ context_page_url: 'https://x.test/' })
    expect(tracks).not.toHaveProperty('plan_details_trial')
  })

  it('keeps hostile event names and property keys out of the SQL', async () => {
    const sender = open('web"; DROP TABLE x; --')
    const long = 'é'.repeat(100)
    const hostile = [
      message('track', { event: 'x"; DROP TABLE web.tracks; --', properties: { 'a"; DROP TABLE y; --': 1 } }),
      message('track', { event: 'select', properties: { user: 'me', select: 'all', 'from"': 2, xmin: 3 } }),
      message('track', {
        event: 'line\u2028break',
        properties: { 'k\u2028ey': 'v\u2028', "it's": "o'k", q: 'a"b\\c{},', nil: 'NULL' },
      }),
      message('track', { event: 'nul\u0000name?', properties: { 'nul\u0000key': 'fine' } }),
      message('track', {
        event: `${'e'.repeat(200)}1`,
        properties: { [`${'p'.repeat(200)}1`]: 1, [`${'p'.repeat(200)}2`]: 2 },
      }),
      message('track', { event: long, properties: { [long]: 'é' } }),
      message('track', { event: 'Tracks', properties: { id: 'mine', 'User ID': 'theirs', '1st': true } }),
      message('track', { event: 'Users' }),
      message('track', { event: '!!!', properties: { '': 'empty key' } }),
    ]
    const outcomes = await sender.sendBatch(outbound(hostile))
    // The NUL is in the event's name as sent (event_text), which no text can hold: it fails alone.
    expect(outcomes.map((o) => o.kind)).toEqual([
      'delivered',
      'delivered',
      'delivered',
      'failed',
      ...Array(5).fill('delivered'),
    ])
    expect(outcomes[3]).toMatchObject({ retryable: false, error: expect.stringContaining('NUL') })
    const schema = 'web_drop_table_x'
    const tables = await sql<{ table_name: string }>(
      url,
      'SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY 1',
      [schema],
    )
    const names = tables.map((t) => t.table_name)
    const longName = names.find((name) => name.startsWith('eee'))!
    expect(names).toEqual(
      expect.arrayContaining([
        'tracks',
        'x_drop_table_web_tracks',
        'select',
        'line_break',
        'tracks_event',
        'users_event',
      ]),
    )
    expect(Buffer.byteLength(longName)).toBeLessThanOrEqual(63)
    expect(names.every((name) => /^[a-z0-9_]+$/.test(name) && name.length <= 63)).toBe(true)
    expect(await columnsOf(schema, 'select')).toMatchObject({
      user: 'text',
      select: 'text',
      from: 'bigint',
      _xmin: 'bigint',
    })
    expect(await columnsOf(schema, 'x_drop_table_web_tracks')).toHaveProperty('a_drop_table_y', 'bigint')
    const [odd] = await sql(url, `SELECT * FROM ${schema}.line_break`)
    expect(odd).toMatchObject({
      event_text: 'line\u2028break',
      k_ey: 'v\u2028',
      it_s: "o'k",
      q: 'a"b\\c{},',
      nil: 'NULL',
    })
    const [tracksEvent] = await sql(url, `SELECT * FROM ${schema}.tracks_event`)
    expect(tracksEvent).toMatchObject({
      event: 'tracks_event',
      event_text: 'Tracks',
      _id: 'mine',
      _user_id: 'theirs',
      _1st: true,
    })
    const longColumns = Object.keys(await columnsOf(schema, longName)).filter((name) => name.startsWith('ppp'))
    expect(longColumns).toHaveLength(2)
    expect(longColumns.every((name) => name.length <= 63)).toBe(true)
    expect(
      await sql(url, 'SELECT count(*)::int AS n FROM information_schema.tables WHERE table_schema = $1', [schema]),
    ).toEqual([{ n: tables.length }])
  })
})
