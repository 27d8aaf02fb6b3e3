import type { ColumnType, LoadValue } from '../schema/values'

// Every statement the PostgreSQL warehouse runs, built here and nowhere else. Identifiers come
// from the naming rules (schema/names.ts: only `[a-z0-9_]`) and are quoted besides, so reserved
// words (`select`, `user`, `timestamp`) are names like any other; values always travel as
// parameters, never in the text.

/** PostgreSQL's type for each kind of column the loader creates. */
export const SQL_TYPES: Readonly<Record<Exclude<ColumnType, 'other'>, string>> = Object.freeze({
  text: 'text',
  bigint: 'bigint',
  double: 'double precision',
  boolean: 'boolean',
  timestamp: 'timestamptz',
})

/**
 * Column names PostgreSQL keeps for itself (system columns: a table cannot have a column named
 * so); a field named like one gets a `_` before it.
 */
export const POSTGRES_RESERVED_COLUMNS: ReadonlySet<string> = new Set([
  'tableoid',
  'xmin',
  'cmin',
  'xmax',
  'cmax',
  'ctid',
])

/** The kind of a column's type (as `format_type` writes it); `other` for types never made here. */
export function columnTypeOf(sqlType: string): ColumnType {
  switch (sqlType) {
    case 'text':
      return 'text'
    case 'bigint':
      return 'bigint'
    case 'double precision':
      return 'double'
    case 'boolean':
      return 'boolean'
    case 'timestamp with time zone':
      return 'timestamp'
    default:
      return 'other'
  }
}

/** `name` as a quoted identifier. */
export function quote(name: string): string {
  return `"${name.replaceAll('"', '""')}"`
}

function table(schema: string, name: string): string {
  return `${quote(schema)}.${quote(name)}`
}

/** Whether the schema exists (`$1`: its name): checked first, as creating it needs more rights. */
export const SCHEMA_EXISTS = 'SELECT 1 FROM pg_namespace WHERE nspname = $1'

export function createSchema(schema: string): string {
  return `CREATE SCHEMA IF NOT EXISTS ${quote(schema)}`
}

/**
 * The columns of the schema's tables (`$1`: the schema; `$2`: the tables, or `NULL` for all), as
 * `table`, `column` and `type` (`format_type`'s spelling), in column order.
 */
export const READ_COLUMNS = `SELECT c.relname AS "table", a.attname AS "column",
    format_type(a.atttypid, a.atttypmod) AS "type"
  FROM pg_attribute a
  JOIN pg_class c ON c.oid = a.attrelid
  JOIN pg_namespace n ON n.oid = c.relnamespace
  WHERE n.nspname = $1 AND c.relkind IN ('r', 'p') AND a.attnum > 0 AND NOT a.attisdropped
    AND ($2::text[] IS NULL OR c.relname = ANY ($2::text[]))
  ORDER BY c.relname, a.attnum`

/** Creates a table with its primary key `id` and `columns` (the standard ones). */
export function createTable(schema: string, name: string, columns: ReadonlyMap<string, ColumnType>): string {
  const definitions = [...columns].map(([column, type]) =>
    column === 'id' ? `${quote(column)} ${sqlTypeOf(type)} PRIMARY KEY` : `${quote(column)} ${sqlTypeOf(type)}`,
  )
  return `CREATE TABLE IF NOT EXISTS ${table(schema, name)} (${definitions.join(', ')})`
}

/** Adds `columns` that are not there yet (another loader may have added some meanwhile). */
export function addColumns(schema: string, name: string, columns: ReadonlyMap<string, ColumnType>): string {
  const clauses = [...columns].map(([column, type]) => `ADD COLUMN IF NOT EXISTS ${quote(column)} ${sqlTypeOf(type)}`)
  return `ALTER TABLE ${table(schema, name)} ${clauses.join(', ')}`
}

/** A column as an insert names it: its name and its type as the table has it. */
export interface InsertColumn {
  readonly name: string
  /** As `format_type` wrote it (`text`, `bigint`, or a type someone chose by hand). */
  readonly sqlType: string
}

/**
 * Writes many rows in one statement, each column's values as one array parameter (`unnest`), so
 * the text is the same for any number of rows. `insert`: a row already there (by `id`) is left as
 * it is. `upsert`: merged with the row there, each column taking the newer row's value when it
 * has one (newer by `timestamp`), else keeping the other's.
 */
export function insertRows(
  schema: string,
  name: string,
  columns: readonly InsertColumn[],
  mode: 'insert' | 'upsert',
): string {
  const names = columns.map((column) => quote(column.name)).join(', ')
  const arrays = columns.map((column, index) => `$${index + 1}::${column.sqlType}[]`).join(', ')
  const head = `INSERT INTO ${table(schema, name)} AS t (${names}) SELECT * FROM unnest(${arrays}) ON CONFLICT ("id")`
  if (mode === 'insert') return `${head} DO NOTHING`
  const newer = `(t."timestamp" IS NULL OR EXCLUDED."timestamp" >= t."timestamp")`
  const sets = columns
    .filter((column) => column.name !== 'id')
    .map(({ name: column }) => {
      const [mine, theirs] = [`EXCLUDED.${quote(column)}`, `t.${quote(column)}`]
      const value = `CASE WHEN ${newer} THEN COALESCE(${mine}, ${theirs}) ELSE COALESCE(${theirs}, ${mine}) END`
      return `${quote(column)} = ${value}`
    })
  return sets.length === 0 ? `${head} DO NOTHING` : `${head} DO UPDATE SET ${sets.join(', ')}`
}

/**
 * `values` as one array parameter's text (`{"a",NULL,"b \\"c\\""}`): every string quoted, its `"`
 * and `\\` escaped. Written here rather than by pg, whose general conversion of each element was
 * a third of a load's CPU (bench/warehouse.mjs).
 */
export function arrayLiteral(values: readonly LoadValue[]): string {
  let text = '{'
  for (let i = 0; i < values.length; i++) {
    if (i > 0) text += ','
    const value = values[i]
    if (value === null || value === undefined) text += 'NULL'
    else if (typeof value !== 'string') text += String(value)
    else if (value.indexOf('"') === -1 && value.indexOf('\\') === -1) text += `"${value}"`
    else text += `"${value.replace(/["\\]/g, '\\$&')}"`
  }
  return `${text}}`
}

function sqlTypeOf(type: ColumnType): string {
  return type === 'other' ? 'text' : SQL_TYPES[type]
}
