import { isNonEmptyString, isPlainObject } from '../../../shared/validate'
import {
  DEFAULT_FUNCTION_TEST_LIMIT,
  ERR_FUNCTION_COMPILE,
  MAX_FUNCTION_TEST_EVENTS,
} from '../../config/function-limits'
import { answeringStoreOutage } from '../../console/api-routes'
import { StoreCalls } from '../../console/store-unavailable'
import type { AdminToken } from '../../http/auth'
import type { AuthLimiter } from '../../http/auth-limiter'
import { readJsonBody, sendJson } from '../../http/body'
import { HttpError } from '../../http/http-error'
import type { Route } from '../../http/route'
import type { Store } from '../../store/store'

const INVALID = 'ERR_INVALID_FUNCTION_TEST'

/** What the route runs a test on: code on events under the relay's limits, delivering nothing. */
export interface FunctionTester {
  /**
   * One result per event, in order: `{ input, output?, dropped?, error?, logs, ms }`.
   *
   * @throws an error whose `code` is `ERR_FUNCTION_COMPILE` when the code does not compile.
   */
  test(code: string, settings: Record<string, unknown>, events: readonly unknown[]): Promise<readonly object[]>
}

/** What the route needs: the tester, the store for a source's newest messages, the admin token. */
export interface FunctionTestContext {
  store: Store
  tester: FunctionTester
  adminToken: AdminToken
  /** Counts failed admin tokens per client address, and refuses an address over its failures. */
  authLimiter: AuthLimiter
}

// A test run's body: its code and up to MAX_FUNCTION_TEST_EVENTS messages of 32 KB.
const MAX_BODY_BYTES = 10_000_000

/**
 * `POST /v1/functions/test { code, settings?, events? | source?, limit? }` (admin Bearer) →
 * `{ results }` (docs/functions.md). A compile error is a 400 naming the problem; the store out of
 * reach, a 503.
 */
export function functionTestRoutes(context: FunctionTestContext): Route[] {
  // A failure of the store itself is a 503, never a 500 with a stack.
  const store = new StoreCalls().watch(context.store)
  const handler: Route['handler'] = async (req, res) => {
    context.authLimiter.guard(req, 'admin API: token', () => context.adminToken.authenticate(req))
    const body = await readJsonBody(req, MAX_BODY_BYTES)
    sendJson(res, 200, await handleFunctionTest(store, context.tester, body))
  }
  return [{ method: 'POST', pattern: /^\/v1\/functions\/test$/, handler: answeringStoreOutage(handler) }]
}

async function handleFunctionTest(
  store: Store,
  tester: FunctionTester,
  body: Record<string, unknown>,
): Promise<{ results: readonly object[] }> {
  const { code, settings = {}, events, source, limit } = body
  if (!isNonEmptyString(code))
    throw new HttpError(400, INVALID, '"code" must be the function\'s code, a non-empty string')
  if (!isPlainObject(settings)) throw new HttpError(400, INVALID, '"settings" must be an object (the functionSettings)')
  if ((events === undefined) === (source === undefined))
    throw new HttpError(
      400,
      INVALID,
      'give either "events" (an array of messages) or "source" (a source\'s name), not both',
    )
  const inputs = events === undefined ? await storedMessages(store, source, limit) : givenEvents(events, limit)
  try {
    return { results: await tester.test(code, settings, inputs) }
  } catch (error) {
    if ((error as { code?: unknown }).code === ERR_FUNCTION_COMPILE)
      throw new HttpError(400, ERR_FUNCTION_COMPILE, (error as Error).message)
    throw error
  }
}

function givenEvents(events: unknown, limit: unknown): unknown[] {
  if (limit !== undefined) throw new HttpError(400, INVALID, '"limit" goes with "source" only')
  if (!Array.isArray(events) || events.length === 0 || events.length > MAX_FUNCTION_TEST_EVENTS)
    throw new HttpError(400, INVALID, `"events" must be an array of 1 to ${MAX_FUNCTION_TEST_EVENTS} messages`)
  const bad = events.findIndex((event) => !isPlainObject(event))
  if (bad >= 0) throw new HttpError(400, INVALID, `events[${bad}] must be an object (a message)`)
  return events
}

// The source's newest stored messages, newest first, each once (a message goes to each destination).
async function storedMessages(store: Store, source: unknown, limit: unknown): Promise<unknown[]> {
  if (!isNonEmptyString(source)) throw new HttpError(400, INVALID, '"source" must be a source\'s name')
  const count = limit ?? DEFAULT_FUNCTION_TEST_LIMIT
  if (typeof count !== 'number' || !Number.isInteger(count) || count < 1 || count > MAX_FUNCTION_TEST_EVENTS)
    throw new HttpError(400, INVALID, `"limit" must be an integer from 1 to ${MAX_FUNCTION_TEST_EVENTS}`)
  const seen = new Set<string>()
  const messages: unknown[] = []
  for (const delivery of await store.listNewest({ source, limit: count * 4 })) {
    if (seen.has(delivery.messageId)) continue
    seen.add(delivery.messageId)
    messages.push(delivery.message)
    if (messages.length === count) break
  }
  if (messages.length === 0)
    throw new HttpError(404, 'ERR_NO_STORED_MESSAGES', `the source ${JSON.stringify(source)} has no stored messages`)
  return messages
}
