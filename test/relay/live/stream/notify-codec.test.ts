import { describe, expect, it } from 'vitest'
import type { StreamEvent } from '../../../../src/relay/features/live/stream/events'
import {
  decodeNotice,
  encodeNotices,
  NOTIFY_PAYLOAD_BYTES,
} from '../../../../src/relay/features/live/stream/notify-codec'

const ingested = (n: number, extra = ''): StreamEvent => ({
  kind: 'ingested',
  data: { at: '2026-11-26T19:00:00.000Z', source: 'web', messageId: `m-${n}${extra}`, type: 'track', event: 'Été ✓' },
})

describe('the stream between relays (NOTIFY payloads)', () => {
  it('packs many events into payloads each under PostgreSQL’s 8,000-byte limit, in order', () => {
    const events = Array.from({ length: 500 }, (_, n) => ingested(n))
    const payloads = encodeNotices('relay-a', events)
    expect(payloads.length).toBeGreaterThan(5)
    expect(payloads.length).toBeLessThan(20)
    for (const payload of payloads) expect(Buffer.byteLength(payload)).toBeLessThanOrEqual(NOTIFY_PAYLOAD_BYTES)
    const decoded = payloads.map((payload) => decodeNotice(payload)!)
    expect(decoded.flatMap((notice) => notice.events)).toEqual(events)
    expect(decoded.every((notice) => notice.from === 'relay-a' && notice.skipped === 0)).toBe(true)
  })

  it('counts an event too large for any payload as skipped, and keeps the rest', () => {
    const events = [ingested(1), ingested(2, 'x'.repeat(9000)), ingested(3)]
    const payloads = encodeNotices('relay-a', events)
    const decoded = payloads.map((payload) => decodeNotice(payload)!)
    expect(decoded.flatMap((notice) => notice.events)).toEqual([events[0], events[2]])
    expect(decoded.reduce((sum, notice) => sum + notice.skipped, 0)).toBe(1)
  })

  it('counts multi-byte characters in bytes, not characters', () => {
    const wide = Array.from({ length: 100 }, (_, n) => ingested(n, '€'.repeat(200)))
    for (const payload of encodeNotices('r', wide))
      expect(Buffer.byteLength(payload)).toBeLessThanOrEqual(NOTIFY_PAYLOAD_BYTES)
  })

  it('sends nothing for no events, and reads a foreign payload as nothing', () => {
    expect(encodeNotices('r', [])).toEqual([])
    expect(decodeNotice('not json')).toBeUndefined()
    expect(decodeNotice('{"from":1}')).toBeUndefined()
  })
})
