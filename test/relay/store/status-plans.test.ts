import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DAY_MS, dayOf } from '../../../src/relay/store/postgres/partitions'
import { POSTGRES_STATEMENTS as SQL } from '../../../src/relay/store/postgres/statements'
import type { Store } from '../../../src/relay/store/store'
import { freshPostgresDatabase, sql } from '../../support/postgres'
import { openTestStore } from '../../support/stores'

// The PostgreSQL statements that pick deliveries by status (the /metrics backlog, the console's
// searches, bulk replay, the endpoints view) must read the partial index kept for that status, not
// the whole table: on a real outbox almost every row is delivered history, so a full scan costs
// the history's size at every scrape and search. Checked on the planner's own choice, over a table
// of mostly delivered rows with fresh statistics, as autovacuum keeps them.
const DELIVERED = 20_000

// Every node of an EXPLAIN (FORMAT JSON) plan that reads a whole table of history: schema 6's
// messages or outcomes, a partition of them included (docs/postgres.md). The queue holds only what
// is pending or dead.
function seqScansOfHistory(node: Record<string, unknown>): string[] {
  const relation = String(node['Relation Name'] ?? '')
  const history = relation.startsWith('messages') || relation.startsWith('outcomes')
  const here = node['Node Type'] === 'Seq Scan' && history ? [`Seq Scan on ${relation}`] : []
  const children = (node.Plans as Record<string, unknown>[] | undefined) ?? []
  return [...here, ...children.flatMap(seqScansOfHistory)]
}

describe('the PostgreSQL statements that select by status', () => {
  let url: string
  let store: Store

  beforeAll(async () => {
    url = await freshPostgresDatabase()
    store = await openTestStore('postgres', undefined, url)
    // Schema 6's three tables as the store writes them: a message per delivery, the pending and
    // dead ones in the queue, the delivered ones' outcomes.
    // History in every partition: the three days the store made ahead, and the kept partition.
    const rows = `SELECT i, CASE WHEN i % 2 = 0 THEN 'web' ELSE 'ios' END AS source,
         CASE WHEN i % 1000 = 1 THEN 'failed' WHEN i % 1000 = 2 THEN 'pending' ELSE 'delivered' END AS status,
         CASE WHEN i % 4 = 3 THEN i ELSE ${dayOf(Date.now())}::bigint + (i % 4) * ${DAY_MS}::bigint + i END AS created
       FROM generate_series(1, $1::int) AS i`
    await sql(
      url,
      `INSERT INTO messages (id, created_at, source, destination, message_id, type, message, user_id, event)
       SELECT i, created, source, 'Webhooks', 'm' || i, 'track', '{"type":"track"}', 'user-' || (i % 500), 'E' FROM (${rows}) r`,
      [DELIVERED],
    )
    await sql(
      url,
      `INSERT INTO queue (id, created_at, source, destination, status, attempts, next_attempt_at, updated_at)
       SELECT i, created, source, 'Webhooks', status, 1, i, i FROM (${rows}) r WHERE status <> 'delivered'`,
      [DELIVERED],
    )
    await sql(
      url,
      `INSERT INTO outcomes (id, created_at, status, attempts, settled_at)
       SELECT i, created, status, 1, i FROM (${rows}) r WHERE status = 'delivered'`,
      [DELIVERED],
    )
    await sql(url, "SELECT setval('delivery_ids', $1::int + 1, false)", [DELIVERED])
    await sql(url, 'ANALYZE messages, queue, outcomes')
  })
  afterAll(async () => {
    await store?.close()
  })

  async function plan(text: string, values: unknown[] = []): Promise<string[]> {
    const [row] = await sql<{ 'QUERY PLAN': { Plan: Record<string, unknown> }[] }>(
      url,
      `EXPLAIN (FORMAT JSON) ${text}`,
      values,
    )
    return seqScansOfHistory(row!['QUERY PLAN'][0]!.Plan)
  }

  it('counts the backlog (/metrics, the overview) from the pending and dead-letter indexes', async () => {
    expect(await plan(SQL.backlog)).toEqual([])
    // And the counts are right: one in a thousand of each, split between the two sources.
    const rows = await store.backlog()
    expect(rows.map((r) => [r.source, r.status, Number(r.count)])).toEqual([
      ['ios', 'failed', 20],
      ['web', 'pending', 20],
    ])
  })

  it('searches by status, newest first, and pages the delivery log by status, through an index', async () => {
    for (const status of ['pending', 'failed']) {
      expect(await plan(SQL.listNewest(['status'], false), [status, 50])).toEqual([])
      expect(await plan(SQL.listNewest(['status'], true), [status, DELIVERED, 50])).toEqual([])
      expect(await plan(SQL.list, [0, status, null, 50])).toEqual([])
    }
  })

  it('finds a message id through the 16-byte key of the messages, in every partition', async () => {
    expect(await plan(SQL.listNewest(['messageId'], false), ['m7', 50])).toEqual([])
    expect((await store.listNewest({ messageId: 'm7', limit: 10 })).map((d) => d.id)).toEqual([7])
  })

  it('counts and replays dead letters, and counts what waits behind an endpoint, through an index', async () => {
    expect(await plan(SQL.countDeadLetters([]), [DELIVERED])).toEqual([])
    expect(await plan(SQL.retryMatching([]), [DELIVERED, 500, 0])).toEqual([])
    expect(await plan(SQL.pendingFor, [['web'], ['Webhooks']])).toEqual([])
    expect(await plan(SQL.failUnconfigured, [0, ['web', 'ios']])).toEqual([])
  })
})
