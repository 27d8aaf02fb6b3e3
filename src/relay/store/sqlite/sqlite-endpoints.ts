import type { CircuitStore } from '../circuits'
import {
  type EndpointQuery,
  type EndpointView,
  LAST_FAILURE_LOOKBACK_MS,
  RECENT_MS,
  rankOffset,
  toEndpointView,
} from '../endpoints'
import { type FailureRow, routesJson, toFailure } from '../rows'
import type { StatementCache } from './statement-cache'
import { SQLITE_STATEMENTS as SQL } from './statements'

/**
 * The endpoints view on SQLite (the store's `endpoints`): each endpoint's circuit, the deliveries
 * waiting for it, and its recent requests (counts, p50 and p99, last failure). Kept beside the
 * store rather than in it: it only reads, one statement per figure, and shares nothing with the
 * store's writes.
 */
export async function sqliteEndpoints(
  sql: StatementCache,
  circuitStore: CircuitStore,
  query: EndpointQuery,
): Promise<EndpointView[]> {
  const { now } = query
  const circuits = new Map((await circuitStore.get(query.endpoints.map((e) => e.url))).map((c) => [c.url, c]))
  return query.endpoints.map(({ url, routes }) => {
    const waiting = sql.get(SQL.pendingFor).get(routesJson(routes)) as { count: number; oldest: number | null }
    const since = now - RECENT_MS
    const recent = sql.get(SQL.recentRequests).get(url, since) as { total: number; delivered: number }
    // Read only when there were requests: a percentile of none is no figure.
    const latency = (p: number) =>
      recent.total === 0
        ? undefined
        : (sql.get(SQL.latencyAt).pluck().get(url, since, rankOffset(p, recent.total)) as number)
    const failure = sql.get(SQL.lastFailure).get(url, now - LAST_FAILURE_LOOKBACK_MS) as FailureRow | undefined
    return toEndpointView({
      url,
      routes,
      circuit: circuits.get(url),
      pending: waiting.count,
      oldestPendingAt: waiting.oldest ?? undefined,
      delivered: recent.delivered,
      failed: recent.total - recent.delivered,
      p50: latency(0.5),
      p99: latency(0.99),
      lastFailure: failure === undefined ? undefined : toFailure(failure),
    })
  })
}
