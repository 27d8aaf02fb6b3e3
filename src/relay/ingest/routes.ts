import type { IncomingMessage, ServerResponse } from 'node:http'
import { MAX_BATCH_BYTES } from '../../shared/limits'
import { MESSAGE_TYPES, type MessageType } from '../../shared/message'
import type { WriteKeys } from '../http/auth'
import type { AuthLimiter } from '../http/auth-limiter'
import { readJsonBody, sendJson } from '../http/body'
import { HttpError } from '../http/http-error'
import type { Route } from '../http/route'
import { log } from '../log'
import type { RoutedSource } from '../config/sources'
import type { GroupCommit } from './group-commit'
import type { RelayEvents } from '../events/channel'
import type { IngestOutcome, Refusal } from '../events/kinds'
import { batchMessages, ingest, singleMessage } from './ingest'
import type { IngestCheck } from './ingest-check'
import { IngestError, type IngestErrorKind } from './ingest-error'
import type { IngestTap } from '../events/tap'

/** What the ingest routes work on. */
export interface IngestContext {
  writeKeys: WriteKeys<RoutedSource>
  /** Counts failed write keys per client address, and refuses an address over its failures. */
  authLimiter: AuthLimiter
  /** Where ingest commits its deliveries, together with other requests of the moment. */
  commits: GroupCommit
  /** New deliveries were committed: wake the worker. */
  wake: () => void
  /** Asked of each valid message before the outbox (`ingest-check.ts`); none: every valid one goes. */
  check?: IngestCheck
  /** Told how each request ended: `ingested` and `filtered`, or `refused` whole. */
  events?: RelayEvents
  /** Told of each message (the live stream). */
  tap?: IngestTap
}

/**
 * The most refusals an answer lists: a body of 500 KB can hold 250,000 empty messages, and an
 * answer listing each would be 35 times the request.
 */
export const MAX_REFUSALS_LISTED = 100

/** The answer to an ingest request, as the client reads it. */
export interface IngestAnswer {
  success: boolean
  /** Messages accepted (valid, and durably written for every destination they go to). */
  accepted: number
  /** The refused messages, the first {@link MAX_REFUSALS_LISTED} of them in batch order. */
  refused: { index: number; reason: string }[]
  /** How many messages were refused in all: only when `refused` does not list them all. */
  refusedCount?: number
}

// The HTTP answer to each way ingest refuses a request whole.
const REFUSED_WHOLE: Record<IngestErrorKind, { status: number; code: string }> = {
  'invalid-body': { status: 400, code: 'ERR_INVALID_BODY' },
  'invalid-message': { status: 400, code: 'ERR_INVALID_MESSAGE' },
  'store-unavailable': { status: 503, code: 'ERR_OUTBOX_UNAVAILABLE' },
  unstorable: { status: 400, code: 'ERR_UNSTORABLE' },
}

/** `POST /v1/batch` and the single-message calls (`POST /v1/track`, …): docs/ingest.md. */
export function ingestRoutes(context: IngestContext): Route[] {
  const observed = (request: Promise<void>): Promise<void> =>
    request.catch((error: unknown) => {
      const answered = error instanceof IngestError ? httpErrorOf(error) : error
      if (context.events?.listened) context.events.publish({ type: 'refused', error: answered })
      throw answered
    })
  return [
    {
      method: 'POST',
      pattern: /^\/v1\/batch$/,
      handler: (req, res) => observed(ingestRequest(context, req, res, batchMessages)),
    },
    {
      method: 'POST',
      pattern: new RegExp(`^/v1/(${MESSAGE_TYPES.join('|')})$`),
      handler: (req, res, [type]) =>
        observed(ingestRequest(context, req, res, (body) => [singleMessage(type as MessageType, body)])),
    },
  ]
}

async function ingestRequest(
  context: IngestContext,
  req: IncomingMessage,
  res: ServerResponse,
  messagesOf: (body: Record<string, unknown>) => unknown[],
): Promise<void> {
  const receivedAt = new Date()
  // Basic auth is checked before the body is read; without an Authorization header the write
  // key can only be in the body, so that check waits for it.
  const { authLimiter, writeKeys } = context
  const authorized = authLimiter.guard(req, 'ingest: write key', () => writeKeys.fromAuthorization(req))
  const body = await readJsonBody(req, MAX_BATCH_BYTES)
  const source = authorized ?? authLimiter.guard(req, 'ingest: write key', () => writeKeys.fromBody(body))
  if (source.disabled) throw sourceDisabled(source.name)
  // A batch's sentAt is on the body; a single call's body is its message, and sentAt with it.
  const arrival = { receivedAt, sentAt: body['sentAt'], tap: context.tap }
  const outcome = await ingest(context.commits, source, messagesOf(body), arrival, context.check)
  const { accepted, refused, filtered } = outcome
  const { events } = context
  if (events?.listened) {
    events.publish({ type: 'ingested', source: source.name, outcome })
    if (filtered > 0) events.publish({ type: 'filtered', source: source.name, count: filtered })
    if (outcome.violations !== undefined)
      events.publish({ type: 'violation', source: source.name, violations: outcome.violations })
  }
  if (accepted > filtered) context.wake()
  if (refused.length > 0 || filtered > 0) {
    // Per request: debug. Refusals are counted in /metrics; one client's junk must not flood the log.
    log.debug(
      `source ${source.name}: ${accepted} accepted (${filtered} of them blocked by its schema), ${refused.length} refused`,
      { event: 'batch-answered', source: source.name, accepted, filtered, refused: refused.length },
    )
  }
  const answer = answerOf(outcome)
  sendJson(res, answer.success ? 200 : 400, answer)
}

/**
 * The client's answer: success unless every message was refused; each refusal's index and reason,
 * at most {@link MAX_REFUSALS_LISTED} of them (then `refusedCount` says how many in all).
 */
export function answerOf({ accepted, refused }: IngestOutcome): IngestAnswer {
  const answer: IngestAnswer = {
    success: accepted > 0 || refused.length === 0,
    accepted,
    refused: refused.slice(0, MAX_REFUSALS_LISTED).map(({ index, reason }: Refusal) => ({ index, reason })),
  }
  if (refused.length > MAX_REFUSALS_LISTED) answer.refusedCount = refused.length
  return answer
}

/** The HTTP answer to a request ingest refused whole. */
export function httpErrorOf(error: IngestError): HttpError {
  const { status, code } = REFUSED_WHOLE[error.kind]
  return new HttpError(status, code, error.message)
}

// A source disabled through the admin API: its key is right, its messages are refused (docs/relay.md).
function sourceDisabled(name: string): HttpError {
  return new HttpError(
    403,
    'ERR_SOURCE_DISABLED',
    `source ${JSON.stringify(name)} is disabled: its messages are refused`,
  )
}
