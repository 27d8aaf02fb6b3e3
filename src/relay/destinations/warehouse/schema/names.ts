import { createHash } from 'node:crypto'

// The warehouse's naming rules (docs/warehouse.md, "Names"), free of any one database: every
// identifier the loader writes comes out of `identifierOf`, so it holds only `[a-z0-9_]`, and a
// dialect quotes it besides (reserved words such as `select` or `user` stay as they are).

/** The longest identifier, bytes: PostgreSQL's (ClickHouse allows more; one rule serves both). */
export const MAX_IDENTIFIER_BYTES = 63

// A cut name keeps this many hex digits of the whole name's hash, so two long names never meet.
const HASH_DIGITS = 8

/** The tables every source's schema has; an event named like one gets {@link EVENT_SUFFIX}. */
export const STANDARD_TABLES: readonly string[] = Object.freeze([
  'tracks',
  'identifies',
  'users',
  'pages',
  'screens',
  'groups',
  'aliases',
])

/** What an event's table name gets when it would be one of the {@link STANDARD_TABLES}. */
export const EVENT_SUFFIX = '_event'

/**
 * `text` as an identifier: words split at case changes (`orderTotal` → `order_total`), lower
 * case, every character outside `[a-z0-9_]` becoming `_` (runs collapsed, ends trimmed), a `_`
 * before a leading digit, and at most {@link MAX_IDENTIFIER_BYTES} bytes (a longer name is cut
 * and ends in a short hash of the whole). A name with nothing left (`""`, `"!!"`) is `_` and the
 * hash of what was sent.
 */
export function identifierOf(text: string): string {
  const known = IDENTIFIERS.get(text)
  if (known !== undefined) return known
  if (IDENTIFIERS.size >= MEMO_LIMIT) IDENTIFIERS.clear()
  const name = computeIdentifier(text)
  IDENTIFIERS.set(text, name)
  return name
}

// The same few keys come in every message, and the rule's regular expressions are most of a
// load's CPU (bench/warehouse.mjs): names already made are kept, up to a bound.
const MEMO_LIMIT = 10_000
const IDENTIFIERS = new Map<string, string>()

function computeIdentifier(text: string): string {
  const words = text
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1_$2')
    .toLowerCase()
  const name = words
    .replace(/[^a-z0-9_]+/g, '_')
    .replace(/_+/g, '_')
    .replace(/^_|_$/g, '')
  if (name === '') return `_${hashOf(text)}`
  return cut(/^[0-9]/.test(name) ? `_${name}` : name)
}

/**
 * Joins two identifiers of a path (`context_page`, `url` → `context_page_url`), cutting the
 * whole to {@link MAX_IDENTIFIER_BYTES} bytes.
 */
export function joinedIdentifier(head: string, tail: string): string {
  return cut(`${head}_${tail}`)
}

/** A track event's table: its name as an identifier, plus `_event` when a standard table has it. */
export function eventTableOf(event: string): string {
  const name = identifierOf(event)
  return STANDARD_TABLES.includes(name) ? `${name}${EVENT_SUFFIX}` : name
}

/** A source's default schema: its name as an identifier. */
export function schemaNameOf(source: string): string {
  return identifierOf(source)
}

/** Whether `name` is an identifier as {@link identifierOf} makes them (for a `schema` setting). */
export function isIdentifier(name: string): boolean {
  return /^[a-z_][a-z0-9_]*$/.test(name) && name.length <= MAX_IDENTIFIER_BYTES
}

function cut(name: string): string {
  if (name.length <= MAX_IDENTIFIER_BYTES) return name
  const kept = name.slice(0, MAX_IDENTIFIER_BYTES - HASH_DIGITS - 1).replace(/_+$/, '')
  return `${kept}_${hashOf(name)}`
}

function hashOf(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex').slice(0, HASH_DIGITS)
}
