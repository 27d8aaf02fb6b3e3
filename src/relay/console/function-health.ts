// Each endpoint's functions on the endpoints view (docs/functions.md): a function that fails on
// most calls is shown there, not silently disabled.

/** One route's function over the last minutes (docs/functions.md): calls, failures, the last error. */
export interface RecentFunctionCallsView {
  source: string
  destination: string
  calls: number
  failed: number
  /** `at`: epoch ms. */
  lastError?: { error: string; at: number }
}

/**
 * The destinations' functions as the console sees them, given by the functions feature (the
 * console never loads the sandbox itself): each function's recent calls in this relay, and the
 * compile check of a source's `PUT`.
 */
export interface ConsoleFunctions {
  /** The compile error's text of `code` under the relay's limits, or `undefined` when it compiles (a `PUT` of a source). */
  compileError(code: string): Promise<string | undefined>
  /** Each route whose function was called in the window ending at `now`. */
  recent(now: number): readonly RecentFunctionCallsView[]
}

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
