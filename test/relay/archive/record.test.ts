import { describe, expect, it } from 'vitest'
import { archiveLine, archiveRecord } from '../../../src/relay/destinations/archive/record'
import { outbound } from './support'

describe('an archive record', () => {
  it("is the message with its messageId and the relay's receivedAt, its line the same as JSON", () => {
    const cases = [
      outbound(1, '2026-03-01T00:00:00.000Z'),
      outbound(2, '2026-03-01T00:00:00.000Z', { receivedAt: 'what the client said', text: 'a\nb\u2028"' }),
      outbound(4, '2026-03-01T00:00:00.000Z', { receivedAt: '2026-03-01T00:00:00.000Z' }),
      { ...outbound(3, '2026-03-01T00:00:00.000Z'), message: { type: 'delete', userId: 'u', timestamp: 't' } },
    ] as const
    for (const one of cases) {
      const record = archiveRecord(one as Parameters<typeof archiveRecord>[0])
      expect(record.receivedAt).toBe('2026-03-01T00:00:00.000Z')
      expect(JSON.parse(archiveLine(one as Parameters<typeof archiveLine>[0]))).toEqual(record)
    }
    expect(archiveRecord(cases[3] as Parameters<typeof archiveRecord>[0]).messageId).toBe('delivery-3')
  })
})
