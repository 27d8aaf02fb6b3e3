import type { Violation, ViolationCount, ViolationKind, ViolationQuery } from './violations'
import { idCursor } from './id-cursor'

// What both stores do around the violations' SQL: the search's text (which fields are given, in
// one fixed order), a row as the API answers it, and the opaque cursor of a page.

/** The columns a violation is read with, under the names of {@link Violation}. */
export const VIOLATION_COLUMNS = 'id, at, source, message_id AS "messageId", type, event, kind, path, message'

/** The columns of a violation as written, in the order `record` binds them. */
export const VIOLATION_INSERT_COLUMNS = 'at, source, message_id, type, event, kind, path, message, user_id'

/**
 * The search's statement: the conditions of the fields given (so each combination is one text),
 * newest first, one more row than the page (to know whether another follows). `param(n)` is the
 * dialect's n-th placeholder (1-based).
 */
export function violationSearch(
  query: ViolationQuery,
  param: (n: number) => string,
): { text: string; values: unknown[] } {
  const conditions: string[] = []
  const values: unknown[] = []
  const add = (condition: string, value: unknown): void => {
    values.push(value)
    conditions.push(`${condition} ${param(values.length)}`)
  }
  if (query.source !== undefined) add('source =', query.source)
  if (query.event !== undefined) add('event =', query.event)
  if (query.kind !== undefined) add('kind =', query.kind)
  if (query.since !== undefined) add('at >=', query.since)
  if (query.cursor !== undefined) add('id <', decodeViolationCursor(query.cursor))
  values.push(query.limit + 1)
  const where = conditions.length === 0 ? '' : ` WHERE ${conditions.join(' AND ')}`
  return {
    text: `SELECT ${VIOLATION_COLUMNS} FROM violations${where} ORDER BY id DESC LIMIT ${param(values.length)}`,
    values,
  }
}

/** A stored row as read by {@link VIOLATION_COLUMNS}. */
export interface ViolationRow {
  id: number | string
  at: number | string
  source: string
  messageId: string
  type: string
  event: string | null
  kind: string
  path: string
  message: string
}

/** A page of at most `limit` violations from `rows` (read with one more), and the next page's cursor. */
export function violationPage(
  rows: readonly ViolationRow[],
  limit: number,
): { violations: Violation[]; next?: string } {
  const shown = rows.slice(0, limit)
  const violations = shown.map(violationOf)
  return rows.length > limit ? { violations, next: encodeViolationCursor(Number(shown.at(-1)!.id)) } : { violations }
}

function violationOf(row: ViolationRow): Violation {
  const violation: Violation = {
    at: new Date(Number(row.at)).toISOString(),
    source: row.source,
    messageId: row.messageId,
    type: row.type,
    kind: row.kind as ViolationKind,
    path: row.path,
    message: row.message,
  }
  if (row.event !== null) violation.event = row.event
  return violation
}

/** The counts' statement: per source, type, event and kind since an instant, the most recent first. */
export function violationCountsText(param: (n: number) => string): string {
  return `SELECT source, type, event, kind, count(*) AS count, max(at) AS "lastAt" FROM violations
    WHERE at >= ${param(1)} GROUP BY source, type, event, kind ORDER BY max(at) DESC LIMIT 500`
}

/** A row of {@link violationCountsText} as the page shows it. */
export function violationCountOf(row: {
  source: string
  type: string
  event: string | null
  kind: string
  count: number | string
  lastAt: number | string
}): ViolationCount {
  const count: ViolationCount = {
    source: row.source,
    type: row.type,
    kind: row.kind as ViolationKind,
    count: Number(row.count),
    lastAt: new Date(Number(row.lastAt)).toISOString(),
  }
  if (row.event !== null) count.event = row.event
  return count
}

const VIOLATION_CURSOR = idCursor('v1.')

/** The opaque cursor of the page that starts below the violation `id`. */
export const encodeViolationCursor = VIOLATION_CURSOR.encode

/**
 * The id below which the page of `cursor` starts.
 * @throws {TypeError} when `cursor` was not made by {@link encodeViolationCursor}.
 */
export const decodeViolationCursor = VIOLATION_CURSOR.decode
