import { FUNCTION_HEALTH_WINDOW_MS } from '../../config/function-limits'
import type { FunctionResult } from './result'
import { errorText } from './step'

/** One route's function over the last {@link FUNCTION_HEALTH_WINDOW_MS}, as the endpoints view shows it. */
export interface RecentFunctionCalls {
  source: string
  destination: string
  calls: number
  /** Calls that threw (a `RetryError` included), timed out or ran out of memory. */
  failed: number
  /** The last failure's text and when it was, epoch ms. */
  lastError?: { error: string; at: number }
}

// One bucket per minute: a busy function costs a counter increment per call, not a list of calls.
const BUCKET_MS = 60_000

interface RouteCalls {
  source: string
  destination: string
  /** Minute (epoch ms / BUCKET_MS) → calls and failures in it. */
  buckets: Map<number, { calls: number; failed: number }>
  lastError?: { error: string; at: number }
}

/**
 * Counts each route's function calls and failures in this relay, so a function that fails on most
 * calls shows on the endpoints view rather than being silently disabled (docs/functions.md).
 */
export class FunctionCallLog {
  readonly #routes = new Map<string, RouteCalls>()

  /** One call of `source` → `destination`'s function, ended at `now`. */
  record(source: string, destination: string, result: FunctionResult, now: number): void {
    const key = `${source}\u0000${destination}`
    let route = this.#routes.get(key)
    if (route === undefined) {
      route = { source, destination, buckets: new Map() }
      this.#routes.set(key, route)
    }
    const minute = Math.floor(now / BUCKET_MS)
    const bucket = route.buckets.get(minute) ?? { calls: 0, failed: 0 }
    bucket.calls++
    const failed = result.kind === 'error' || result.kind === 'retry'
    if (failed) {
      bucket.failed++
      route.lastError = {
        error: result.kind === 'error' ? errorText(result) : `RetryError: ${result.message}`,
        at: now,
      }
    }
    route.buckets.set(minute, bucket)
    if (route.buckets.size > FUNCTION_HEALTH_WINDOW_MS / BUCKET_MS + 1) this.#forget(route, now)
  }

  /** Each route with calls in the window ending at `now`. */
  recent(now: number): RecentFunctionCalls[] {
    const rows: RecentFunctionCalls[] = []
    for (const route of this.#routes.values()) {
      this.#forget(route, now)
      let calls = 0
      let failed = 0
      for (const bucket of route.buckets.values()) {
        calls += bucket.calls
        failed += bucket.failed
      }
      if (calls === 0) continue
      const { source, destination, lastError } = route
      const recentError = lastError !== undefined && lastError.at > now - FUNCTION_HEALTH_WINDOW_MS
      rows.push({ source, destination, calls, failed, ...(recentError ? { lastError } : {}) })
    }
    return rows
  }

  // Buckets wholly before the window go.
  #forget(route: RouteCalls, now: number): void {
    const first = Math.floor((now - FUNCTION_HEALTH_WINDOW_MS) / BUCKET_MS)
    for (const minute of route.buckets.keys()) if (minute < first) route.buckets.delete(minute)
  }
}
