import type { DeliverableMessage } from '../../../../shared/message'
import { isIsoTimestamp } from '../../../../shared/timestamp'
import { flatten } from './flatten'
import { eventTableOf } from './names'
import type { ColumnType } from './values'

/** One row a message writes: its table, and its values by column (standard and flattened). */
export interface TableRow {
  readonly table: string
  /**
   * `insert`: one row per message, a second load of it changes nothing (`tracks`, `pages`, …);
   * `upsert`: one row per user or group, merged with the latest values (`users`, `groups`).
   */
  readonly mode: 'insert' | 'upsert'
  /** `id` first, then the standard columns, then the flattened fields. */
  readonly values: ReadonlyMap<string, unknown>
}

/** A standard column: its name and type, the same in every warehouse. */
export interface StandardColumn {
  readonly name: string
  readonly type: ColumnType
}

// Every table has these (docs/warehouse.md, "Tables and columns"); `id` is the primary key.
const COMMON: readonly StandardColumn[] = [
  { name: 'id', type: 'text' },
  { name: 'received_at', type: 'timestamp' },
  { name: 'sent_at', type: 'timestamp' },
  { name: 'timestamp', type: 'timestamp' },
  { name: 'original_timestamp', type: 'timestamp' },
  { name: 'uuid_ts', type: 'timestamp' },
  { name: 'user_id', type: 'text' },
  { name: 'anonymous_id', type: 'text' },
]
const EVENT: readonly StandardColumn[] = [
  ...COMMON,
  { name: 'event', type: 'text' },
  { name: 'event_text', type: 'text' },
]
const VIEW: readonly StandardColumn[] = [...COMMON, { name: 'name', type: 'text' }, { name: 'category', type: 'text' }]
const BY_TABLE: Readonly<Record<string, readonly StandardColumn[]>> = {
  identifies: COMMON,
  users: COMMON,
  pages: VIEW,
  screens: VIEW,
  groups: [...COMMON, { name: 'group_id', type: 'text' }],
  aliases: [...COMMON, { name: 'previous_id', type: 'text' }],
  tracks: EVENT,
}

const STANDARD_NAMES = new Map(
  Object.entries(BY_TABLE).map(([table, columns]) => [table, new Set(columns.map((column) => column.name))]),
)

/** The standard columns of `table` (an event's table has those of `tracks`). */
export function standardColumnsOf(table: string): readonly StandardColumn[] {
  return BY_TABLE[table] ?? EVENT
}

/** What the loader knows of a message besides the message itself. */
export interface RowContext {
  /** When the relay received it, ISO 8601; else the message's own `receivedAt` (ingest sets it). */
  readonly receivedAt?: string | undefined
  /** The batch's `sentAt`, when the client sent one; else the message's own `sentAt`. */
  readonly sentAt?: string | undefined
  /** The load's time, ISO 8601 (`uuid_ts`). */
  readonly loadedAt: string
}

/**
 * The rows a message writes (docs/warehouse.md): `track` one in `tracks` and one in its event's
 * table, `identify` one in `identifies` and its user's in `users`, `group` its group's in
 * `groups`, `page`, `screen` and `alias` one in their tables. Field names that meet a standard
 * column's, or one of `reservedColumns` (a database's own, such as PostgreSQL's `xmin`), get a `_`
 * before them. A `delete` message writes none.
 */
export function rowsOf(message: DeliverableMessage, at: RowContext, reservedColumns: ReadonlySet<string>): TableRow[] {
  if (message.type === 'delete') return []
  const common = new Map<string, unknown>([
    ['id', message.messageId],
    ['received_at', timestampOr(at.receivedAt ?? message['receivedAt'], at.loadedAt)],
    ['sent_at', timestampOr(at.sentAt ?? message['sentAt'], undefined)],
    ['timestamp', message.timestamp],
    ['original_timestamp', timestampOr(message['originalTimestamp'], message.timestamp)],
    ['uuid_ts', at.loadedAt],
    ['user_id', message.userId],
    ['anonymous_id', message.anonymousId],
  ])
  const context = new Map<string, unknown>()
  flatten(message.context, 'context', (name, value) => context.set(name, value))
  // A row: the common columns, `extra` (its own standard ones), then `fields` flattened and the
  // context's (a later field whose name meets an earlier one's replaces it).
  const row = (table: string, extra: Record<string, unknown>, fields: unknown, withContext = true): TableRow => {
    const values = new Map(common)
    for (const name in extra) values.set(name, extra[name])
    const standard = STANDARD_NAMES.get(table) ?? STANDARD_NAMES.get('tracks')!
    const add = (name: string, value: unknown) => {
      values.set(standard.has(name) || reservedColumns.has(name) ? `_${name}` : name, value)
    }
    flatten(fields, '', add)
    if (withContext) for (const [name, value] of context) add(name, value)
    return { table, mode: UPSERTED.has(table) ? 'upsert' : 'insert', values }
  }
  switch (message.type) {
    case 'track': {
      const event = String(message.event)
      const names = { event: eventTableOf(event), event_text: event }
      return [row('tracks', names, undefined), row(names.event, names, message.properties)]
    }
    case 'identify': {
      const rows = [row('identifies', {}, message.traits)]
      if (message.userId !== undefined) rows.push(row('users', { id: message.userId }, message.traits, false))
      return rows
    }
    case 'page':
    case 'screen':
      return [row(`${message.type}s`, { name: message.name, category: message.category }, message.properties)]
    case 'group':
      return [row('groups', { id: message.groupId, group_id: message.groupId }, message.traits)]
    case 'alias':
      return [row('aliases', { previous_id: message.previousId }, undefined)]
  }
}

// One row per user and per group, merged with the latest values; every other table, one per message.
const UPSERTED = new Set(['users', 'groups'])

function timestampOr(value: unknown, otherwise: string | undefined): string | undefined {
  return typeof value === 'string' && isIsoTimestamp(value) ? value : otherwise
}
