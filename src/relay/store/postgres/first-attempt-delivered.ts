import { MESSAGES_KEPT } from './schema6'

// A delivery delivered at its first attempt writes no outcome row (docs/postgres.md, "A delivery
// delivered at once"): its queue row goes, and nothing takes its place. Its message with neither a
// queue row nor an outcome row reads as delivered, once, when its attempt was made (the requests
// log holds it: written by the same statement). That row cost 178 bytes of WAL a message (the row
// and its primary key's entry) and an insert routed to its day's partition, on every delivery of
// a receiver that answers.
//
// Only a message in a day partition goes without: retention drops the day whole, its messages and
// requests with it. The kept partition's rows (a day not made, a queued delivery copied out of a
// dropped day) are pruned one by one by their outcome's settled time, so they keep their row.

// When the attempt that delivered a delivery settled without an outcome row was made (m: its
// message): its last requests' start (one attempt's requests, to each of its URLs, share it; a
// dead letter retried by hand has earlier ones, before its window began again). The view shows
// it as the attempt's time and as the delivery's last change, and retention ages it by it.
export const ATTEMPTED_AT = (m: string) =>
  `(SELECT max(a.at) FROM attempts a WHERE a.delivery_id = ${m}.id AND a.created_at = ${m}.created_at)`

/**
 * Whether the delivery just settled as `settled` (the record statement's row: its message's id and
 * created_at, its status, attempts before this one, error) writes an outcome row: all but one
 * delivered at its first attempt, without an error, with its request in `requested` (the ids of
 * the statement's requests: the view reads its times there), its message in a day partition.
 */
export const WRITES_OUTCOME = (settled: string, requested: string) => `NOT (
    ${settled}.status = 'delivered' AND ${settled}.attempts = 0 AND ${settled}.error IS NULL
    AND ${settled}.id = ANY (${requested})
    AND EXISTS (SELECT 1 FROM messages m WHERE m.id = ${settled}.id AND m.created_at = ${settled}.created_at
      AND m.tableoid <> '${MESSAGES_KEPT}'::regclass))`

/**
 * Whether the message `m` was delivered at its first attempt (it has neither a queue nor an outcome
 * row), and settled before `before`: by its attempt's time, as an outcome row by its settled time.
 * Only in a day partition: the caller bounds `m`'s time to the days not dropped whole yet.
 */
export const SETTLED_AT_ONCE_BEFORE = (m: string, before: string) =>
  `NOT EXISTS (SELECT 1 FROM queue q WHERE q.id = ${m}.id)
      AND NOT EXISTS (SELECT 1 FROM outcomes o WHERE o.id = ${m}.id AND o.created_at = ${m}.created_at)
      AND coalesce(${ATTEMPTED_AT(m)}, ${m}.created_at) < ${before}`

/**
 * The PostgreSQL step: the deliveries view, as schema 6 made it but for a message with neither
 * row, which shows one attempt, its time from the requests log. CREATE OR REPLACE keeps
 * the view's columns, and the trigger that takes updates through it.
 */
export const POSTGRES_FIRST_ATTEMPT_DELIVERED_STEP = `
  CREATE OR REPLACE VIEW deliveries AS
  SELECT m.id, m.source, m.destination, m.message_id, m.type, m.message,
    coalesce(q.status, o.status, 'delivered') AS status,
    coalesce(q.attempts, o.attempts, 1) AS attempts,
    coalesce(q.first_attempt_at, o.first_attempt_at, ${ATTEMPTED_AT('m')}) AS first_attempt_at,
    coalesce(q.next_attempt_at, o.settled_at, ${ATTEMPTED_AT('m')}, m.created_at) AS next_attempt_at,
    coalesce(q.last_error, o.last_error) AS last_error,
    m.created_at,
    coalesce(q.updated_at, o.settled_at, ${ATTEMPTED_AT('m')}, m.created_at) AS updated_at,
    q.lease_until, q.lease_owner, m.user_id, m.event, q.paused_at,
    m.replay_of, m.replay_id, m.erased_at
  FROM messages m
  LEFT JOIN queue q ON q.id = m.id
  LEFT JOIN outcomes o ON o.id = m.id AND o.created_at = m.created_at;
`
