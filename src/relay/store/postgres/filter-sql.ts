import { EQUALITY_COLUMNS, type FilterField, isEqualityField } from '../filter'
import type { DeliveryFilter } from '../store'
import { MESSAGE_KEY_OF } from './schema6'

// The conditions of the PostgreSQL store's filtered statements (the delivery log's searches, bulk
// retry, replays), over the deliveries view (./schema6.ts).

/**
 * The conditions of a filter after `first`, its parameters numbered from `$start` in the order
 * filterValues lists them (the routes take two: their sources and their destinations).
 */
export function where(fields: readonly FilterField[], first: readonly string[], start: number): string {
  const conditions = [...first]
  let n = start
  for (const field of fields) {
    if (field === 'status') conditions.push(statusIs(`$${n++}::text`))
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
    THEN (id, created_at) IN (SELECT id, created_at FROM queue WHERE status = ${value}) ELSE status = ${value} END)`
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
