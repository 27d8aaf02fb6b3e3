// Every limit and code of a destination's function, in one place (docs/functions.md lists them).

/** `functionTimeout`'s default: how long one call may run, ms. */
export const DEFAULT_FUNCTION_TIMEOUT_MS = 1_000

/** `functionMemory`'s default: the heap one function may use, MB. */
export const DEFAULT_FUNCTION_MEMORY_MB = 64

/** The `console` lines kept per call (the rest are counted as dropped). */
export const FUNCTION_LOG_LINES = 20

/** The bytes (UTF-8) of `console` output kept per call. */
export const FUNCTION_LOG_BYTES = 4_096

/** The bytes (UTF-8) kept of a failed call's error message, and of its stack: the rest is cut. */
export const FUNCTION_ERROR_BYTES = 4_096

/**
 * The most characters the relay reads of one reply from the sandbox (the event, its console lines
 * and how the call ended); a reply past it is a failed call, never copied out of the sandbox.
 */
export const FUNCTION_REPLY_CHARS = 256 * 1024

/** The sandbox's stack, bytes: deep recursion fails as an error instead of overflowing the worker. */
export const FUNCTION_STACK_BYTES = 512 * 1024

/**
 * Extra time the relay waits, past `functionTimeout`, for the sandbox's own interrupt before it
 * ends the whole worker thread (a call stuck where the interrupt cannot reach it).
 */
export const FUNCTION_WATCHDOG_GRACE_MS = 1_000

/** The error code of a call that ran past `functionTimeout`. */
export const ERR_FUNCTION_TIMEOUT = 'ERR_FUNCTION_TIMEOUT'

/** The error code of a call that ran out of `functionMemory`. */
export const ERR_FUNCTION_MEMORY = 'ERR_FUNCTION_MEMORY'

/** The reason stored with a delivery the function dropped. */
export const DROPPED_BY_FUNCTION = 'dropped by function'

/** The handlers a function may define, by message type (Segment's insert functions). */
export const HANDLER_BY_TYPE = {
  track: 'onTrack',
  identify: 'onIdentify',
  page: 'onPage',
  screen: 'onScreen',
  group: 'onGroup',
  alias: 'onAlias',
  delete: 'onDelete',
} as const

/** The handler that runs for every type without its own. */
export const ANY_TYPE_HANDLER = 'transformEvent'

/** The error code of a function whose code does not compile (or throws while loading). */
export const ERR_FUNCTION_COMPILE = 'ERR_FUNCTION_COMPILE'

/** The stored messages `POST /v1/functions/test` runs on when given a `source` and no `limit`. */
export const DEFAULT_FUNCTION_TEST_LIMIT = 10

/** The most events one `POST /v1/functions/test` runs (given, or stored messages). */
export const MAX_FUNCTION_TEST_EVENTS = 100

/** How far back the endpoints view counts each function's calls and failures, ms. */
export const FUNCTION_HEALTH_WINDOW_MS = 5 * 60_000
