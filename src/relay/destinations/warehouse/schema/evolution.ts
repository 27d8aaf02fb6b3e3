import { standardColumnsOf, type TableRow } from './rows'
import { type ColumnType, coerce, inferType, isInt64, type LoadValue } from './values'

/** A table's columns as the warehouse has them: name → type. */
export type TableColumns = ReadonlyMap<string, ColumnType>

/** What a load needs changed before it can write its rows: a table to create, columns to add. */
export interface SchemaChange {
  readonly table: string
  /** The table does not exist yet: create it with its standard columns. */
  readonly create: boolean
  /** Columns to add, in the order first seen, with the type their first value chose. */
  readonly add: ReadonlyMap<string, ColumnType>
}

/** A value that its column could not hold: stored as `NULL` (docs/warehouse.md, "Conflicts"). */
export interface WarehouseConflict {
  readonly table: string
  readonly column: string
  /** The value as it was sent. */
  readonly value: unknown
}

/**
 * The tables and columns `rows` need that `known` lacks. A column's type is its standard one, or
 * else what its first non-null value in `rows` chooses; a field that is `null` in every row adds
 * nothing yet. Tables come in name order (so two loaders take their locks in one order).
 */
export function changesFor(rows: readonly TableRow[], known: ReadonlyMap<string, TableColumns>): SchemaChange[] {
  const changes = new Map<string, { create: boolean; add: Map<string, ColumnType> }>()
  for (const row of rows) {
    const columns = known.get(row.table)
    let change = changes.get(row.table)
    if (change === undefined) {
      change = { create: columns === undefined, add: new Map() }
      changes.set(row.table, change)
    }
    const standard = standardColumnsOf(row.table)
    if (change.create) {
      for (const column of standard) change.add.set(column.name, column.type)
    }
    for (const [name, value] of row.values) {
      if (columns?.has(name) || change.add.has(name)) continue
      const type = standard.find((column) => column.name === name)?.type ?? inferType(value)
      if (type !== undefined) change.add.set(name, type)
    }
  }
  return [...changes]
    .filter(([, change]) => change.create || change.add.size > 0)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([table, change]) => ({ table, create: change.create, add: change.add }))
}

/** A row with every value as its column holds it, and what could not be held. */
export interface CoercedRow {
  readonly table: string
  readonly mode: TableRow['mode']
  readonly values: ReadonlyMap<string, LoadValue>
  readonly conflicts: readonly WarehouseConflict[]
}

/**
 * `row`'s values cast to `columns`' types (values.ts): one that cannot be is `NULL` and a
 * conflict. A field still without a column is `null` in every row so far (changesFor adds none).
 *
 * @throws {Error} when a non-null value has no column: the schema was not brought up to date first.
 */
export function coerceRow(row: TableRow, columns: TableColumns): CoercedRow {
  const values = new Map<string, LoadValue>()
  let conflicts: WarehouseConflict[] | undefined
  for (const [name, value] of row.values) {
    const type = columns.get(name)
    if (type === undefined) {
      if (value === null || value === undefined) continue
      throw new Error(`the column ${row.table}.${name} is missing`)
    }
    const same = asItIs(value, type)
    if (same !== undefined) {
      values.set(name, same)
      continue
    }
    const cast = coerce(value, type)
    if (cast.ok) values.set(name, cast.value)
    else {
      values.set(name, null)
      conflicts ??= []
      conflicts.push({ table: row.table, column: name, value })
    }
  }
  return { table: row.table, mode: row.mode, values, conflicts: conflicts ?? NO_CONFLICTS }
}

const NO_CONFLICTS: readonly WarehouseConflict[] = Object.freeze([])

// The common case, a value already of its column's type, as `coerce` would give it, without an
// object per value (a load casts tens of values a row; their garbage was a fifth of its CPU);
// `undefined` for any other case, which `coerce` judges.
function asItIs(value: unknown, type: ColumnType): LoadValue | undefined {
  if (value === null || value === undefined) return null
  switch (typeof value) {
    case 'string':
      return type === 'text' || type === 'other' ? value : undefined
    case 'number':
      return type === 'double' || (type === 'bigint' && isInt64(value)) ? value : undefined
    case 'boolean':
      return type === 'boolean' ? value : undefined
    default:
      return undefined
  }
}

/**
 * Upserted rows of one table merged per `id`, oldest `timestamp` first, so that each id is one
 * row holding every column's latest non-null value (a statement may not change a row twice).
 */
export function mergeUpserts(rows: readonly CoercedRow[]): CoercedRow[] {
  const byId = new Map<LoadValue, CoercedRow[]>()
  for (const row of rows) {
    const id = row.values.get('id') ?? null
    const list = byId.get(id)
    if (list === undefined) byId.set(id, [row])
    else list.push(row)
  }
  return [...byId.values()].map((list) => {
    if (list.length === 1) return list[0]!
    const ordered = [...list].sort((a, b) => timeOf(a) - timeOf(b))
    const values = new Map<string, LoadValue>()
    for (const row of ordered) {
      for (const [name, value] of row.values) if (value !== null || !values.has(name)) values.set(name, value)
    }
    return { table: list[0]!.table, mode: list[0]!.mode, values, conflicts: [] }
  })
}

function timeOf(row: CoercedRow): number {
  const value = row.values.get('timestamp')
  return typeof value === 'string' ? Date.parse(value) : 0
}
