import { EQUALITY_COLUMNS, type FilterField, isEqualityField } from '../filter'
import type { DeliveryFilter } from '../store'
import { MESSAGE_KEY_OF } from './schema6'
import { HELD_BY_BLOCKS } from './delivery-blocks'

// The conditions of the PostgreSQL store's filtered statements (the delivery log's searches, bulk
// retry, replays), over the deliveries view (./schema6.ts).

/**
 * The conditions of a filter after `first`, its parameters numbered from `$start` in the order
 * filterValues lists them (the routes take two: their sources and their destinations). `status`
 * writes the status's condition, given its parameter (by default {@link statusIs}).
 */
export function where(
  fields: readonly FilterField[],
  first: readonly string[],
  start: number,
  status: (value: string) => string = statusIs,
): string {
  const conditions = [...first]
  let n = start
  for (const field of fields) {
    if (field === 'status') conditions.push(status(`$${n++}::text`))
    else if (field === 'messageId') {
      // Through the messages' 16-byte key (./schema6.ts), then the id itself.
      conditions.push(`${MESSAGE_KEY_OF('message_id')} = ${MESSAGE_KEY_OF(`$${n}::text`)} AND message_id = $${n}::text`)
      n++
    } else if (isEqualityField(field)) conditions.push(`${EQUALITY_COLUMNS[field]} = $${n++}::text`)
    else if (field === 'since') conditions.push(`created_at >= $${n++}::bigint`)
    else if (field === 'until') conditions.push(`created_at <= $${n++}::bigint`)
    else {
      conditions.push(`(source, destination) IN (SELECT * FROM unnest($${n}::text[], $${n + 1}::text[]))`)
      n += 2
    }
  }
  return conditions.length === 0 ? 'true' : conditions.join(' AND ')
}

/**
 * A status condition on the deliveries view that reads the queue's own rows for the statuses
 * only the queue holds (pending, dead), never the history: `value` is a parameter, so the planner,
 * given its value (these statements are not prepared by name), keeps one branch.
 */
export function statusIs(value: string): string {
  return `(CASE WHEN ${value} IN ('pending', 'failed')
    THEN (id, created_at) IN (SELECT id, created_at FROM ${WAITING} w WHERE status = ${value}) ELSE status = ${value} END)`
}

// What is pending or dead: the queue's rows, and the deliveries their blocks still hold (pending:
// ./delivery-blocks.ts), with the queue's columns that searches read.
const WAITING = `(SELECT id, created_at, source, destination, status FROM queue
    UNION ALL SELECT h.id, h.created_at, h.source, h.destination, 'pending' FROM ${HELD_BY_BLOCKS} h)`

// The statuses only the queue holds (pending, dead): every other one is the messages' history.
const QUEUED = "('pending', 'failed')"

// The filter fields whose columns the queue has too (a queue row keeps its message's source,
// destination and created time): a filter of these alone is answered from the queue's rows.
const QUEUE_FIELDS: readonly FilterField[] = ['status', 'source', 'since', 'until', 'routes']

/** Whether the queue's own columns answer every field of a filter. */
export function onQueueAlone(fields: readonly FilterField[]): boolean {
  return fields.every((field) => QUEUE_FIELDS.includes(field))
}

/**
 * A page of the deliveries view, newest first, filtered by a status (its parameter `$1`, the first
 * field) and `fields`' other conditions after `first` (over `id`). The planner is given the status
 * (these statements are not prepared by name), so the branch of the other kind of status is proven
 * empty and dropped, and each branch is planned for its LIMIT. A pending or dead status reads the
 * queue's rows, newest first, and joins their messages: on its own (or with the route, source or
 * time) a page is its `limit` queue rows, whatever the history's size; with a field only the
 * messages have (user id, message id, event, type), that field's index picks the rows and the
 * queue says which are of the status. The status's condition must not sit inside a CASE (as
 * {@link statusIs} does): a sub-select there is not turned into a join but hashed whole once per
 * partition, every dead letter at every search (docs/postgres.md, "Searches at 1,000,000 rows").
 */
export function newestByStatus(fields: readonly FilterField[], first: readonly string[], limit: string): string {
  // The deliveries blocks hold, newest block first, each block's newest first: a page reads the
  // blocks it needs, not every one.
  const held = `SELECT id, created_at FROM ${HELD_BY_BLOCKS} w
        WHERE $1::text = 'pending' AND ${where(fields, first, 1, () => 'true')}
        ORDER BY block DESC, id DESC LIMIT ${limit}`
  const queued = onQueueAlone(fields)
    ? `SELECT d.* FROM (
        (SELECT id, created_at FROM queue WHERE $1::text IN ${QUEUED} AND ${where(fields, first, 1, (v) => `status = ${v}`)}
        ORDER BY id DESC LIMIT ${limit})
        UNION ALL (${held})
        ORDER BY id DESC LIMIT ${limit}) k
      JOIN deliveries d ON d.id = k.id AND d.created_at = k.created_at
      WHERE $1::text IN ${QUEUED}`
    : `SELECT * FROM deliveries
      WHERE $1::text IN ${QUEUED} AND ${where(fields, first, 1, (v) => `id IN (SELECT id FROM ${WAITING} w WHERE status = ${v})`)}
      ORDER BY id DESC LIMIT ${limit}`
  const settled = `SELECT * FROM deliveries
      WHERE $1::text NOT IN ${QUEUED} AND ${where(fields, first, 1, (v) => `status = ${v}`)}
      ORDER BY id DESC LIMIT ${limit}`
  return `SELECT * FROM ((${queued}) UNION ALL (${settled})) found ORDER BY id DESC LIMIT ${limit}`
}

// The dead letters among the deliveries view's rows, read from the queue.
const DEAD = "(id, created_at) IN (SELECT id, created_at FROM queue WHERE status = 'failed')"

/**
 * The dead letters a filter (no status: they are all `failed`) matches, as a FROM and WHERE over
 * rows with an `id`, after `first`: the queue's own rows when its columns answer the filter (a
 * bulk replay of everything, of a source or a time span counts and picks from the dead-letter
 * index alone), else the deliveries view's.
 */
export function deadLetters(fields: readonly FilterField[], first: readonly string[], start: number): string {
  return onQueueAlone(fields)
    ? `queue WHERE ${where(fields, ["status = 'failed'", ...first], start)}`
    : `deliveries WHERE ${where(fields, [DEAD, ...first], start)}`
}

/** How many parameters a filter's conditions take (the routes take two). */
export function parameterCount(fields: readonly FilterField[]): number {
  return fields.length + (fields.includes('routes') ? 1 : 0)
}

/** The parameters of a filter's conditions, in the order its statement numbers them. */
export function filterValues(fields: readonly FilterField[], filter: DeliveryFilter): unknown[] {
  return fields.flatMap((field): unknown[] => {
    if (field !== 'routes') return [filter[field]]
    const routes = filter.routes ?? []
    return [routes.map((r) => r.source), routes.map((r) => r.destination)]
  })
}
