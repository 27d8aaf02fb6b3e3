import type { CircuitStore } from '../circuits'
import {
  type EndpointQuery,
  type EndpointView,
  LAST_FAILURE_LOOKBACK_MS,
  RECENT_MS,
  rankOffset,
  toEndpointView,
} from '../endpoints'
import { type FailureRow, toFailure } from '../rows'
import type { PostgresPool } from '../../kit/postgres/pool'
import { POSTGRES_STATEMENTS as SQL } from './statements'

/**
 * The endpoints view on PostgreSQL: per webhook URL, its circuit, the deliveries pending behind it,
 * its requests of the last minutes (answered or failed, latency p50/p99) and its last failure, each
 * URL's queries at once on the pool.
 */
export async function endpointViews(
  pool: PostgresPool,
  circuitStore: CircuitStore,
  query: EndpointQuery,
): Promise<EndpointView[]> {
  const { now } = query
  const since = now - RECENT_MS
  const circuits = new Map((await circuitStore.get(query.endpoints.map((e) => e.url))).map((c) => [c.url, c]))
  return Promise.all(
    query.endpoints.map(async ({ url, routes }) => {
      const [pending, recent, failure] = await Promise.all([
        pool.query<{ count: number; oldest: string | null }>(SQL.pendingFor, [
          routes.map((r) => r.source),
          routes.map((r) => r.destination),
        ]),
        pool.query<{ total: number; delivered: number }>(SQL.recentRequests, [url, since]),
        pool.query<FailureRow>(SQL.lastFailure, [url, now - LAST_FAILURE_LOOKBACK_MS]),
      ])
      const { total, delivered } = recent.rows[0]!
      const latency = async (p: number) => {
        if (total === 0) return undefined
        const { rows } = await pool.query<{ ms: number }>(SQL.latencyAt, [url, since, rankOffset(p, total)])
        return rows[0]?.ms
      }
      const [p50, p99] = await Promise.all([latency(0.5), latency(0.99)])
      const lastFailure = failure.rows[0]
      return toEndpointView({
        url,
        routes,
        circuit: circuits.get(url),
        pending: pending.rows[0]!.count,
        oldestPendingAt: pending.rows[0]!.oldest === null ? undefined : Number(pending.rows[0]!.oldest),
        delivered,
        failed: total - delivered,
        p50,
        p99,
        lastFailure: lastFailure === undefined ? undefined : toFailure(lastFailure),
      })
    }),
  )
}
