import type { RecentFunctionCallsView } from '../features/functions/test-routes'

// Each endpoint's functions on the endpoints view (docs/functions.md): a function that fails on
// most calls is shown there, not silently disabled.

/** A function's recent calls as `GET /v1/endpoints` answers them (`at` in ISO 8601). */
export interface FunctionCallsJson {
  source: string
  destination: string
  calls: number
  failed: number
  lastError?: { error: string; at: string }
}

/** The functions of the sources that send to an endpoint, among `recent`. */
export function functionsOf(
  sources: readonly string[],
  recent: readonly RecentFunctionCallsView[],
): RecentFunctionCallsView[] {
  return recent.filter((row) => sources.includes(row.source))
}

/** `row` as the admin API answers it. */
export function functionCallsJson(row: RecentFunctionCallsView): FunctionCallsJson {
  const { lastError, ...rest } = row
  return lastError === undefined
    ? rest
    : { ...rest, lastError: { ...lastError, at: new Date(lastError.at).toISOString() } }
}

/** Whether most of the function's recent calls failed: the endpoints view marks it. */
export function failingMostly(row: RecentFunctionCallsView): boolean {
  return row.failed * 2 > row.calls
}
