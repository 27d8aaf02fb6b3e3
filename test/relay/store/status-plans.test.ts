import { afterAll, beforeAll, describe, expect, it } from 'vitest'
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

// Every node of an EXPLAIN (FORMAT JSON) plan that reads the whole deliveries table.
function seqScansOfDeliveries(node: Record<string, unknown>): string[] {
  const here =
    node['Node Type'] === 'Seq Scan' && node['Relation Name'] === 'deliveries' ? ['Seq Scan on deliveries'] : []
  const children = (node.Plans as Record<string, unknown>[] | undefined) ?? []
  return [...here, ...children.flatMap(seqScansOfDeliveries)]
}

describe('the PostgreSQL statements that select by status', () => {
  let url: string
  let store: Store

  beforeAll(async () => {
    url = await freshPostgresDatabase()
    store = await openTestStore('postgres', undefined, url)
    await sql(
      url,
      `INSERT INTO deliveries (source, destination, message_id, type, message, user_id, event, status,
         attempts, next_attempt_at, created_at, updated_at)
       SELECT CASE WHEN i % 2 = 0 THEN 'web' ELSE 'ios' END, 'Webhooks', 'm' || i, 'track', '{"type":"track"}',
         'user-' || (i % 500), 'E',
         CASE WHEN i % 1000 = 1 THEN 'failed' WHEN i % 1000 = 2 THEN 'pending' ELSE 'delivered' END,
         1, i, i, i
       FROM generate_series(1, $1::int) AS i`,
      [DELIVERED],
    )
    await sql(url, 'ANALYZE deliveries')
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
    return seqScansOfDeliveries(row!['QUERY PLAN'][0]!.Plan)
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

  it('counts and replays dead letters, and counts what waits behind an endpoint, through an index', async () => {
    expect(await plan(SQL.countDeadLetters([]), [DELIVERED])).toEqual([])
    expect(await plan(SQL.retryMatching([]), [DELIVERED, 500, 0])).toEqual([])
    expect(await plan(SQL.pendingFor, [['web'], ['Webhooks']])).toEqual([])
    expect(await plan(SQL.failUnconfigured, [0, ['web', 'ios']])).toEqual([])
  })
})
