import { isIsoTimestamp } from '../../../../shared/timestamp'

/**
 * The kinds of column the loader creates, named apart from any database's types (a dialect maps
 * them: PostgreSQL's `text`, `bigint`, `double precision`, `boolean`, `timestamptz`). `other` is a
 * column someone made by hand with a type the loader does not create: values reach it as text,
 * for the database to read.
 */
export type ColumnType = 'text' | 'bigint' | 'double' | 'boolean' | 'timestamp' | 'other'

/** A value as it is loaded: text, a number, a boolean, or `null`. */
export type LoadValue = string | number | boolean | null

/** A value in a column of a given type: loaded as `value`, or a conflict (stored as `NULL`). */
export type Coerced = { ok: true; value: LoadValue } | { ok: false }

// The range of a 64-bit signed integer, as numbers: an integer past it is no `bigint`.
const INT64_LIMIT = 2 ** 63

/**
 * The column type a value's first sighting chooses (docs/warehouse.md, "Types"): booleans are
 * `boolean`, integers `bigint`, other numbers `double`, ISO 8601 date-times with a zone
 * `timestamp`, any other string `text`. `undefined` for `null` and `undefined`, which choose
 * nothing (the column waits for a value).
 */
export function inferType(value: unknown): ColumnType | undefined {
  if (value === null || value === undefined) return undefined
  if (typeof value === 'boolean') return 'boolean'
  if (typeof value === 'number') return isInt64(value) ? 'bigint' : 'double'
  if (typeof value === 'string') return isTimestamp(value) ? 'timestamp' : 'text'
  return 'text'
}

/**
 * `value` as a column of `type` holds it: as it is when it is of that type, cast when it can be
 * without losing anything (`"42"` into `bigint`, `42` into `text`, `"true"` into `boolean`), else
 * a conflict. Arrays and objects are JSON text.
 */
export function coerce(value: unknown, type: ColumnType): Coerced {
  if (value === null || value === undefined) return { ok: true, value: null }
  switch (type) {
    case 'text':
    case 'other':
      return { ok: true, value: textOf(value) }
    case 'bigint':
      return toBigint(value)
    case 'double':
      return toDouble(value)
    case 'boolean':
      return toBoolean(value)
    case 'timestamp':
      return typeof value === 'string' && isTimestamp(value) ? { ok: true, value } : { ok: false }
  }
}

/** How a value is written as text: strings as they are, anything else as JSON. */
export function textOf(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value)
}

/**
 * An ISO 8601 date-time with a zone (the relay's own rule), in the years 0001–9999: year 0000,
 * which ISO 8601 allows, is no year to PostgreSQL or ClickHouse.
 */
function isTimestamp(value: string): boolean {
  return isIsoTimestamp(value) && !value.startsWith('0000')
}

/** Whether a number is an integer a 64-bit signed `bigint` holds. */
export function isInt64(value: number): boolean {
  return Number.isInteger(value) && value >= -INT64_LIMIT && value < INT64_LIMIT
}

function toBigint(value: unknown): Coerced {
  if (typeof value === 'number') return isInt64(value) ? { ok: true, value } : { ok: false }
  if (typeof value === 'string' && /^-?[0-9]{1,19}$/.test(value)) {
    const big = BigInt(value)
    if (big >= -(2n ** 63n) && big < 2n ** 63n) return { ok: true, value }
  }
  return { ok: false }
}

function toDouble(value: unknown): Coerced {
  if (typeof value === 'number') return { ok: true, value }
  if (typeof value === 'string' && /^\s*-?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?\s*$/.test(value)) {
    const number = Number(value)
    if (Number.isFinite(number)) return { ok: true, value: number }
  }
  return { ok: false }
}

function toBoolean(value: unknown): Coerced {
  if (typeof value === 'boolean') return { ok: true, value }
  if (value === 'true' || value === 'false') return { ok: true, value: value === 'true' }
  return { ok: false }
}
