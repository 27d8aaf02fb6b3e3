import type { StreamEvent } from './events'

/**
 * PostgreSQL refuses a `NOTIFY` payload of 8,000 bytes or more: each payload is kept under this
 * (bytes of UTF-8), leaving room for the envelope's own fields.
 */
export const NOTIFY_PAYLOAD_BYTES = 7_900

/** One notification of the stream between relays: a batch of events from one relay. */
export interface StreamNotice {
  /** The relay that sent it (a relay ignores its own notices: it delivered them already). */
  from: string
  events: StreamEvent[]
  /** Events of the sender that fit no payload (one event alone over the limit): announced as skipped. */
  skipped: number
}

/**
 * Packs events into as few payloads as fit, each under `limitBytes` and keeping their order. An
 * event too large for any payload on its own (an attempt's error text can be long) is left out
 * and counted in the next payload's `skipped`, so the readers of other relays are told, as are
 * `skippedBefore` events the sender skipped before (they could not be sent: counted in the first).
 */
export function encodeNotices(
  from: string,
  events: readonly StreamEvent[],
  limitBytes = NOTIFY_PAYLOAD_BYTES,
  skippedBefore = 0,
): string[] {
  const payloads: string[] = []
  const head = `{"from":${JSON.stringify(from)},"events":[`
  let parts: string[] = []
  let bytes = 0
  let skipped = skippedBefore
  const tail = (count: number) => `],"skipped":${count}}`
  const close = () => {
    payloads.push(`${head}${parts.join(',')}${tail(skipped)}`)
    parts = []
    bytes = 0
    skipped = 0
  }
  // The envelope's bytes with the largest skipped count it could carry.
  const envelope = Buffer.byteLength(head) + Buffer.byteLength(tail(events.length + skippedBefore))
  for (const event of events) {
    const json = JSON.stringify(event)
    const size = Buffer.byteLength(json)
    if (envelope + size > limitBytes) {
      skipped++
      continue
    }
    const separator = parts.length > 0 ? 1 : 0
    if (envelope + bytes + separator + size > limitBytes) close()
    bytes += (parts.length > 0 ? 1 : 0) + size
    parts.push(json)
  }
  if (parts.length > 0 || skipped > 0) close()
  return payloads
}

/** Reads a payload of {@link encodeNotices}; `undefined` for one that is not (never throws). */
export function decodeNotice(payload: string): StreamNotice | undefined {
  try {
    const notice = JSON.parse(payload) as Partial<StreamNotice>
    if (typeof notice.from !== 'string' || !Array.isArray(notice.events) || typeof notice.skipped !== 'number') {
      return undefined
    }
    return notice as StreamNotice
  } catch {
    return undefined
  }
}
