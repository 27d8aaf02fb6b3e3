import type { DeliverableMessage } from '../../../../shared/message'
import type { WebhookSettings } from '../../../../webhooks/index'
import { log } from '../../../log'
import { WEBHOOKS_DESTINATION } from '../../../config/sources'
import type { SettledAttempt } from '../../../events/kinds'
import type { NextStep } from '../../../store/store'
import { HttpError } from '../../../http/http-error'
import type { IngestTap } from '../../../events/tap'
import type { AttemptOutcome, StreamEvent } from './events'
import { forwardedMessage } from './forward'
import type { LiveStream } from './live-stream'

// What ingest and delivery tell the live stream, as its events (docs/operations.md, "The live
// stream"). Each is built only while someone reads: `live.listening` is checked first.

/** Ingest's tap into the stream: `ingested`, `refused` and `filtered` events, and forwarded messages. */
export function streamIngestTap(
  live: LiveStream,
  webhooksOf: (source: string) => WebhookSettings | undefined,
  beforeFormatting: (source: string, message: DeliverableMessage) => Promise<DeliverableMessage | undefined>,
  now: () => Date = () => new Date(),
): IngestTap {
  // Forwarded messages go one after another, in the order ingest accepted them, each after its
  // destination's function (which may take a while): a forward reader sees what delivery sends.
  let forwarding: Promise<void> = Promise.resolve()
  const forward = (source: string, message: DeliverableMessage) => {
    forwarding = forwarding.then(async () => {
      try {
        const formatted = await beforeFormatting(source, message)
        if (formatted === undefined || !live.forwarding(source)) return
        const forwarded = forwardedMessage(formatted, webhooksOf(source))
        if (forwarded !== undefined) live.deliverMessage(source, forwarded)
      } catch (error) {
        log.warn(`live stream: could not forward a message of ${source}: ${(error as Error).message}`, {
          event: 'internal-error',
        })
      }
    })
  }
  return {
    get listening() {
      return live.listening
    },
    accepted(source, message, blocked, withheld) {
      const at = now().toISOString()
      const messageId = String(message['messageId'])
      const event: StreamEvent = {
        kind: 'ingested',
        data: { at, source, messageId, type: String(message['type']) },
      }
      if (typeof message['event'] === 'string') event.data.event = message['event']
      if (typeof message['userId'] === 'string' || typeof message['userId'] === 'number') {
        event.data.userId = String(message['userId'])
      }
      live.publish(event)
      if (blocked !== false) {
        const reason = blocked === true ? 'blocked by the source’s schema' : blocked
        live.publish({ kind: 'filtered', data: { at, source, messageId, reason } })
        return
      }
      for (const [destination, reason] of withheld ?? []) {
        live.publish({ kind: 'filtered', data: { at, source, messageId, reason, destination } })
      }
      // What the Webhooks destination does not get, a forward reader does not get either.
      if (live.forwarding(source) && withheld?.has(WEBHOOKS_DESTINATION) !== true) {
        forward(source, message as DeliverableMessage)
      }
    },
    refused(source, refusal, raw) {
      const event: StreamEvent = {
        kind: 'refused',
        data: { at: now().toISOString(), source, kind: refusal.kind, reason: refusal.reason },
      }
      const messageId = (raw as Record<string, unknown> | null)?.['messageId']
      if (typeof messageId === 'string') event.data.messageId = messageId
      live.publish(event)
    },
  }
}

/** A request refused whole (no message of it read): a `refused` event with its error code. */
export function publishRequestRefused(live: LiveStream, error: unknown, now: () => Date = () => new Date()): void {
  if (!live.listening) return
  const { code, message } = error instanceof HttpError ? error : { code: 'ERR_INTERNAL', message: 'the relay failed' }
  live.publish({ kind: 'refused', data: { at: now().toISOString(), kind: code, reason: message } })
}

// The stream's outcome of an attempt, by the delivery's status after it.
const OUTCOMES: Record<NextStep['status'], AttemptOutcome> = {
  delivered: 'delivered',
  pending: 'retry',
  failed: 'failed',
  filtered: 'filtered',
}

/** A settled attempt: one `attempt` event per request of its fan-out, each with the receiver's answer. */
export function publishAttempt(live: LiveStream, attempt: SettledAttempt): void {
  if (!live.listening) return
  const { outcome } = attempt
  const at = new Date(outcome.at).toISOString()
  const result = OUTCOMES[outcome.next.status]
  const base = {
    at,
    source: attempt.source,
    deliveryId: String(outcome.id),
    messageId: attempt.messageId ?? '',
    outcome: result,
  }
  if (outcome.next.status === 'filtered') {
    // Its destination's function dropped it (no request went): the delivery ends filtered.
    const { error: reason } = outcome.next
    live.publish({
      kind: 'filtered',
      data: { at, source: attempt.source, messageId: base.messageId, reason, deliveryId: base.deliveryId },
    })
  }
  if (outcome.requests.length === 0) {
    // Nothing was sent (every URL's circuit open past the window, or a function's drop): the
    // delivery's own error, when it failed.
    const error = outcome.next.status === 'pending' || outcome.next.status === 'failed' ? outcome.next.error : undefined
    live.publish({ kind: 'attempt', data: { ...base, url: '', ms: attempt.ms, ...(error ? { error } : {}) } })
    return
  }
  for (const request of outcome.requests) {
    const data: StreamEvent & { kind: 'attempt' } = {
      kind: 'attempt',
      data: { ...base, url: request.url, ms: request.ms },
    }
    if (request.status !== undefined) data.data.status = request.status
    // A request answered with an error status carries no error of its own: the delivery's says it.
    const failed = request.status === undefined || request.status < 200 || request.status > 299
    const error = request.error ?? (failed && outcome.next.status !== 'delivered' ? outcome.next.error : undefined)
    if (error !== undefined) data.data.error = error
    live.publish(data)
  }
}
