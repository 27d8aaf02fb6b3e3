import { describe, expect, it } from 'vitest'
import { changesFor, coerceRow, mergeUpserts } from '../../../src/relay/destinations/warehouse/schema/evolution'
import { eventTableOf, identifierOf, schemaNameOf } from '../../../src/relay/destinations/warehouse/schema/names'
import { rowsOf } from '../../../src/relay/destinations/warehouse/schema/rows'
import { coerce, inferType } from '../../../src/relay/destinations/warehouse/schema/values'
import { message } from './warehouse-fixtures'

const AT = { receivedAt: '2026-01-01T00:00:01Z', loadedAt: '2026-01-01T00:00:02Z' }

describe('warehouse names', () => {
  it.each([
    ['Order Completed', 'order_completed'],
    ['orderTotal', 'order_total'],
    ['HTMLParser', 'html_parser'],
    ['  --Trim__me--  ', 'trim_me'],
    ['1st place', '_1st_place'],
    ['"; DROP TABLE users; --', 'drop_table_users'],
    ['line\u2028sep\u0000nul', 'line_sep_nul'],
    ['select', 'select'],
    ['user', 'user'],
  ])('%j → %j', (given, expected) => {
    expect(identifierOf(given)).toBe(expected)
  })

  it('cuts a long name to 63 bytes ending in a hash of the whole, so two long names never meet', () => {
    const a = identifierOf(`${'a'.repeat(100)}_one`)
    const b = identifierOf(`${'a'.repeat(100)}_two`)
    expect(a).toHaveLength(63)
    expect(b).toHaveLength(63)
    expect(a).not.toBe(b)
    expect(a).toMatch(/^a+_[0-9a-f]{8}$/)
    expect(identifierOf('a'.repeat(63))).toBe('a'.repeat(63))
  })

  it('names something for a name with nothing left, apart for each', () => {
    expect(identifierOf('!!!')).toMatch(/^_[0-9a-f]{8}$/)
    expect(identifierOf('!!!')).not.toBe(identifierOf('???'))
  })

  it('gives an event named like a standard table `_event`', () => {
    expect(eventTableOf('Users')).toBe('users_event')
    expect(eventTableOf('tracks')).toBe('tracks_event')
    expect(eventTableOf('Signed Up')).toBe('signed_up')
    expect(schemaNameOf('My Web-App')).toBe('my_web_app')
  })
})

describe('warehouse types', () => {
  it.each([
    [true, 'boolean'],
    [42, 'bigint'],
    [-(2 ** 62), 'bigint'],
    [2 ** 64, 'double'],
    [1.5, 'double'],
    ['2026-01-02T03:04:05Z', 'timestamp'],
    ['2026-01-02T03:04:05.123+02:00', 'timestamp'],
    ['2026-02-30T00:00:00Z', 'text'],
    ['0000-01-01T00:00:00Z', 'text'],
    ['2026-01-02', 'text'],
    ['hello', 'text'],
    [[1, 2], 'text'],
    [null, undefined],
  ])('%j is %s', (value, type) => {
    expect(inferType(value)).toBe(type)
  })

  it('casts only what it can without a loss', () => {
    expect(coerce('42', 'bigint')).toEqual({ ok: true, value: '42' })
    expect(coerce('9223372036854775808', 'bigint')).toEqual({ ok: false })
    expect(coerce(1.5, 'bigint')).toEqual({ ok: false })
    expect(coerce(' 2.5e3 ', 'double')).toEqual({ ok: true, value: 2500 })
    expect(coerce('1e999', 'double')).toEqual({ ok: false })
    expect(coerce('true', 'boolean')).toEqual({ ok: true, value: true })
    expect(coerce(1, 'boolean')).toEqual({ ok: false })
    expect(coerce(12, 'text')).toEqual({ ok: true, value: '12' })
    expect(coerce({ a: 1 }, 'text')).toEqual({ ok: true, value: '{"a":1}' })
    expect(coerce('noon', 'timestamp')).toEqual({ ok: false })
  })
})

describe('warehouse rows', () => {
  it("writes a track into tracks and its event's table, prefixing fields named like standard columns", () => {
    const track = message('track', {
      event: 'Played',
      properties: { id: 'x', event: 'y', xmin: 1 },
      context: { ip: '1.2.3.4' },
    })
    const [tracks, played] = rowsOf(track, AT, new Set(['xmin']))
    expect(tracks!.table).toBe('tracks')
    expect([...tracks!.values.keys()]).toContain('context_ip')
    expect([...tracks!.values.keys()]).not.toContain('_id')
    expect(played!.table).toBe('played')
    expect(played!.values.get('id')).toBe(track.messageId)
    expect(played!.values.get('_id')).toBe('x')
    expect(played!.values.get('_event')).toBe('y')
    expect(played!.values.get('_xmin')).toBe(1)
    expect(played!.values.get('event')).toBe('played')
  })

  it('takes receivedAt and sentAt from the message when the batch gives none', () => {
    const stamped = message('alias', { previousId: 'p', receivedAt: '2026-01-01T00:00:09Z', sentAt: 'nope' })
    const [row] = rowsOf(stamped, { loadedAt: AT.loadedAt }, new Set())
    expect(row!.values.get('received_at')).toBe('2026-01-01T00:00:09Z')
    expect(row!.values.get('sent_at')).toBeUndefined()
    const [bare] = rowsOf(message('alias', { previousId: 'p' }), { loadedAt: AT.loadedAt }, new Set())
    expect(bare!.values.get('received_at')).toBe(AT.loadedAt)
  })

  it('writes no users row for an anonymous identify, and none at all for a delete', () => {
    const anonymous = message('identify', { userId: undefined, anonymousId: 'a1', traits: { x: 1 } } as never)
    expect(rowsOf(anonymous, AT, new Set()).map((row) => row.table)).toEqual(['identifies'])
    expect(rowsOf({ type: 'delete', userId: 'u', timestamp: AT.receivedAt }, AT, new Set())).toEqual([])
  })

  it('asks for the columns a batch lacks, typed by the first non-null value, tables in name order', () => {
    const rows = [
      ...rowsOf(message('track', { event: 'B', properties: { n: null } }), AT, new Set()),
      ...rowsOf(message('track', { event: 'A', properties: { n: 1 } }), AT, new Set()),
      ...rowsOf(message('track', { event: 'B', properties: { n: 'x' } }), AT, new Set()),
    ]
    const changes = changesFor(rows, new Map([['a', new Map([['id', 'text' as const]])]]))
    expect(changes.map((change) => [change.table, change.create])).toEqual([
      ['a', false],
      ['b', true],
      ['tracks', true],
    ])
    expect(changes[1]!.add.get('n')).toBe('text')
    expect(changes[0]!.add.get('n')).toBe('bigint')
    expect(changes[0]!.add.get('received_at')).toBe('timestamp')
  })

  it('merges upserts per id, the newest non-null value of each column winning', () => {
    const row = (timestamp: string, values: Record<string, unknown>) =>
      coerceRow(
        { table: 'users', mode: 'upsert', values: new Map(Object.entries({ id: 'u', timestamp, ...values })) },
        new Map([
          ['id', 'text'],
          ['timestamp', 'timestamp'],
          ['plan', 'text'],
          ['seats', 'bigint'],
        ]),
      )
    const merged = mergeUpserts([
      row('2026-01-01T00:00:02Z', { plan: 'pro' }),
      row('2026-01-01T00:00:01Z', { plan: 'free', seats: 3 }),
    ])
    expect(merged).toHaveLength(1)
    expect(Object.fromEntries(merged[0]!.values)).toEqual({
      id: 'u',
      timestamp: '2026-01-01T00:00:02Z',
      plan: 'pro',
      seats: 3,
    })
  })
})
