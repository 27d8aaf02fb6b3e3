import { randomUUID } from 'node:crypto'
import { isDestinationEnabled } from '../../shared/integrations'
import { serialize } from '../../shared/json'
import { MAX_MESSAGE_BYTES } from '../../shared/limits'
import type { Integrations, MessageType } from '../../shared/message'
import { findWireMessageProblem } from '../../shared/validate'
import type { RoutedSource } from '../config/sources'
import { isDataError } from '../store/data-error'
import { searchKeysOf } from '../store/rows'
import { orderKeyOf } from '../store/ordering/order-key'
import type { NewDelivery } from '../store/store'
import { withBatchDefaults } from './batch-defaults'
import { eventTime } from './event-time'
import type { IngestCheck } from './ingest-check'
import type { GroupCommit } from './group-commit'
import { IngestError } from './ingest-error'
import { findUnstorable } from '../store/storable'
import type { IngestOutcome, Refusal } from '../events/kinds'
import type { IngestTap } from '../events/tap'
import { log, plural } from '../log'
import type { NewViolation } from '../store/violations'

/** When and how a request's messages arrived: the facts their times are worked out from. */
export interface Arrival {
  /** When the relay received the request; every message carries it as `receivedAt`. @default now */
  receivedAt?: Date
  /** The batch's `sentAt` (the client's clock when it sent the request), as received; may be invalid. */
  sentAt?: unknown
  /** Told of each message as it is judged, once the commit succeeded (the live stream). */
  tap?: IngestTap | undefined
}

/**
 * Validates a batch's messages one by one, fills in `messageId` where missing, sets `timestamp`
 * when the client gave none (from `originalTimestamp`, corrected by `sentAt`: {@link eventTime})
 * and `receivedAt`, routes each to the source's destinations its `integrations` allow, and commits all their
 * deliveries in one transaction (shared with the other requests of the moment: {@link GroupCommit}).
 * Only then does it resolve: the caller answers 2xx after this. Invalid or oversized messages are
 * refused on their own; the valid rest is accepted.
 *
 * @throws {IngestError} `store-unavailable` when the commit failed: nothing was stored; or
 * `unstorable` when the store refused this request's data (see `isDataError`).
 */
export async function ingest(
  commits: GroupCommit,
  source: RoutedSource,
  messages: readonly unknown[],
  { receivedAt = new Date(), sentAt, tap }: Arrival = {},
  check?: IngestCheck,
): Promise<IngestOutcome> {
  const deliveries: NewDelivery[] = []
  const refused: Refusal[] = []
  let accepted = 0
  let filtered = 0
  // The batch index of each accepted messageId: a second message with one is stored only once.
  const acceptedIds = new Map<unknown, number>()
  const receivedAtText = receivedAt.toISOString()
  // Only while the live stream has a reader: otherwise ingest keeps nothing for it.
  const heard:
    | { message: Record<string, unknown>; blocked: boolean | string; withheld?: Withheld | undefined }[]
    | undefined = tap?.listening ? [] : undefined
  // What the check found, recorded once the deliveries are committed.
  const violations: NewViolation[] = []
  messages.forEach((raw, index) => {
    const problem = findWireMessageProblem(raw)
    if (problem !== undefined) {
      refused.push({ index, reason: problem, kind: 'invalid' })
      return
    }
    // A shallow copy: the fields filled in here never change what the caller parsed. A write key
    // sent in the body (the single-call paths take the body as the message) is a secret: it is
    // never stored, shown in the delivery log or forwarded.
    const { writeKey: _writeKey, ...message } = raw as Record<string, unknown>
    const unstorable = findUnstorable(message)
    if (unstorable !== undefined) {
      refused.push({ index, reason: unstorable, kind: 'unstorable' })
      return
    }
    message['messageId'] ??= randomUUID()
    message['timestamp'] = eventTime(message, sentAt, receivedAt)
    message['receivedAt'] = receivedAtText
    const serialized = serialize(message)
    if (!serialized.ok) {
      refused.push({ index, reason: `the message ${serialized.problem}`, kind: 'invalid' })
      return
    }
    if (serialized.bytes > MAX_MESSAGE_BYTES) {
      refused.push({
        index,
        reason: `the message is ${serialized.bytes} bytes of JSON, over the ${MAX_MESSAGE_BYTES}-byte limit`,
        kind: 'too_large',
      })
      return
    }
    const first = acceptedIds.get(message['messageId'])
    if (first !== undefined) {
      refused.push({
        index,
        reason: `messageId ${JSON.stringify(message['messageId'])} is the messageId of message ${first} of this batch`,
        kind: 'duplicate',
      })
      return
    }
    const verdict = check?.(message, source)
    if (typeof verdict === 'string') {
      refused.push({ index, reason: verdict, kind: 'invalid' })
      return
    }
    acceptedIds.set(message['messageId'], index)
    accepted++
    let stored = message
    let json = serialized.json
    if (verdict !== undefined) {
      violations.push(...verdict.violations)
      if (verdict.message !== undefined) {
        stored = verdict.message
        json = JSON.stringify(stored)
      }
    }
    const blocked =
      verdict?.blocked ??
      (message['type'] === 'track' && source.blockedEvents?.has(message['event'] as string) === true)
    heard?.push({ message: stored, blocked, withheld: verdict?.withheld })
    if (blocked !== false) {
      filtered++
      return
    }
    const integrations = message['integrations'] as Integrations | undefined
    // The message is at hand: the store need not parse its JSON again for what it is found by.
    const keys = searchKeysOf(stored)
    for (const destination of source.destinations) {
      if (!isDestinationEnabled(integrations, destination) || verdict?.withheld?.has(destination)) continue
      deliveries.push({
        source: source.name,
        destination,
        messageId: message['messageId'] as string,
        type: message['type'] as string,
        json,
        searchKeys: keys,
        // Ordered (docs/delivery-controls.md): the user's key, which the store's claims order by.
        orderKey: source.ordered?.has(destination) ? orderKeyOf(source.name, destination, stored) : undefined,
      })
    }
  })
  try {
    await commits.commit(deliveries)
  } catch (error) {
    // Nothing of this request was committed. Its own data, refused by the store: sending it again
    // would fail again (the other requests of its group were committed without it).
    if (isDataError(error)) {
      throw new IngestError('unstorable', `the store cannot hold these messages: ${(error as Error).message}`, {
        cause: error,
      })
    }
    // Otherwise the store is unavailable: the client may send the batch again. The error itself
    // (it may name the database's host) goes to the log and /healthz behind the admin token.
    throw new IngestError('store-unavailable', 'the messages could not be stored: the store is unavailable', {
      cause: error,
    })
  }
  if (violations.length > 0) await recordViolations(check, violations)
  if (heard !== undefined && tap !== undefined) {
    for (const { message, blocked, withheld } of heard) {
      tap.accepted(source.name, message, blocked, withheld && enabledOnly(message, withheld))
    }
    for (const refusal of refused) tap.refused(source.name, refusal, messages[refusal.index])
  }
  return violations.length > 0 ? { accepted, refused, filtered, violations } : { accepted, refused, filtered }
}

// Right after the commit, before the answer. A failure loses the record, never the messages: they
// are committed, and sending them again would not bring it back; the log says so.
async function recordViolations(check: IngestCheck | undefined, violations: readonly NewViolation[]): Promise<void> {
  try {
    await check?.record?.(violations)
  } catch (error) {
    log.error(`could not record ${plural(violations.length, 'tracking plan violation')}: ${(error as Error).message}`, {
      event: 'violations-unrecorded',
      count: violations.length,
    })
  }
}

type Withheld = ReadonlyMap<string, string>

// Only the destinations it would have gone to: one its `integrations` turn off was never withheld.
function enabledOnly(message: Record<string, unknown>, withheld: Withheld): Withheld {
  const integrations = message['integrations'] as Integrations | undefined
  return new Map([...withheld].filter(([destination]) => isDestinationEnabled(integrations, destination)))
}

/** The messages of a `POST /v1/batch` body: its `batch` array. */
export function batchMessages(body: Record<string, unknown>): unknown[] {
  const batch = body['batch']
  if (!Array.isArray(batch))
    throw new IngestError(
      'invalid-body',
      'the body must be { "batch": [ messages ] }: batch is missing or not an array',
    )
  return withBatchDefaults(batch, body)
}

/**
 * The message of a single-call body (`POST /v1/track`): the path names its type. A body naming a
 * different type is refused rather than silently retyped.
 */
export function singleMessage(type: MessageType, body: Record<string, unknown>): Record<string, unknown> {
  if (body['type'] !== undefined && body['type'] !== type) {
    throw new IngestError(
      'invalid-message',
      `the message's type is ${JSON.stringify(body['type'])} but it was sent to /v1/${type}`,
    )
  }
  return { ...body, type }
}
