import { describe, expect, it } from 'vitest'
import { eventTime } from '../../../src/relay/ingest/event-time'
import { adminGet, post, track, waitFor } from '../helpers'
import { useRelayWithReceiver } from '../fixtures/relay'

const RECEIVED = new Date('2026-03-01T12:00:10.000Z')

describe('eventTime', () => {
  it.each([
    // [what, message fields, the batch's sentAt, expected timestamp]
    [
      'a given timestamp is kept as given, whatever else is sent',
      { timestamp: '2020-01-01T00:00:00+02:00', originalTimestamp: '2026-03-01T12:00:00.000Z' },
      '2026-03-01T12:00:05.000Z',
      '2020-01-01T00:00:00+02:00',
    ],
    [
      'originalTimestamp corrected by sentAt: receivedAt − (sentAt − originalTimestamp)',
      { originalTimestamp: '2026-03-01T12:00:00.000Z' },
      '2026-03-01T12:00:05.000Z',
      '2026-03-01T12:00:05.000Z',
    ],
    [
      'a device clock an hour fast is corrected',
      { originalTimestamp: '2026-03-01T13:00:00.000Z' },
      '2026-03-01T13:00:07.500Z',
      '2026-03-01T12:00:02.500Z',
    ],
    [
      'a device clock a day slow, in another zone, is corrected',
      { originalTimestamp: '2026-02-28T14:00:00+02:00' },
      '2026-02-28T14:00:01+02:00',
      '2026-03-01T12:00:09.000Z',
    ],
    [
      'the message’s own sentAt when the batch has none',
      { originalTimestamp: '2026-03-01T12:00:00.000Z', sentAt: '2026-03-01T12:00:04.000Z' },
      undefined,
      '2026-03-01T12:00:06.000Z',
    ],
    [
      'the message’s own sentAt when the batch’s is invalid',
      { originalTimestamp: '2026-03-01T12:00:00.000Z', sentAt: '2026-03-01T12:00:04.000Z' },
      'not a time',
      '2026-03-01T12:00:06.000Z',
    ],
    [
      'the batch’s sentAt before the message’s',
      { originalTimestamp: '2026-03-01T12:00:00.000Z', sentAt: '2026-03-01T12:00:04.000Z' },
      '2026-03-01T12:00:01.000Z',
      '2026-03-01T12:00:09.000Z',
    ],
    [
      'originalTimestamp alone, normalised to UTC with milliseconds',
      { originalTimestamp: '2026-03-01T13:59:58+02:00' },
      undefined,
      '2026-03-01T11:59:58.000Z',
    ],
    ['nothing: receivedAt', {}, '2026-03-01T12:00:05.000Z', '2026-03-01T12:00:10.000Z'],
    [
      'an invalid sentAt is ignored: originalTimestamp as it is',
      { originalTimestamp: '2026-03-01T12:00:00.000Z' },
      1_772_366_405_000,
      '2026-03-01T12:00:00.000Z',
    ],
    [
      'a sentAt without a zone is ignored',
      { originalTimestamp: '2026-03-01T12:00:00.000Z' },
      '2026-03-01T12:00:05',
      '2026-03-01T12:00:00.000Z',
    ],
    [
      'an invalid originalTimestamp is ignored: receivedAt',
      { originalTimestamp: 'yesterday' },
      '2026-03-01T12:00:05.000Z',
      '2026-03-01T12:00:10.000Z',
    ],
    [
      'an originalTimestamp naming no real day is ignored',
      { originalTimestamp: '2026-02-30T12:00:00.000Z' },
      '2026-03-01T12:00:05.000Z',
      '2026-03-01T12:00:10.000Z',
    ],
    [
      'an originalTimestamp that is not a string is ignored',
      { originalTimestamp: { $date: 1 } },
      undefined,
      '2026-03-01T12:00:10.000Z',
    ],
    [
      'a correction past the year 9999 is ignored: originalTimestamp as it is',
      { originalTimestamp: '0001-01-01T00:00:00.000Z' },
      '9000-01-01T00:00:00.000Z',
      '0001-01-01T00:00:00.000Z',
    ],
  ])('%s', (_what, message, sentAt, expected) => {
    expect(eventTime(message, sentAt, RECEIVED)).toBe(expected)
  })
})

describe('times on the wire', () => {
  const running = useRelayWithReceiver('sqlite')

  it('delivers the skew-corrected time, keeps a given one, and stores receivedAt on every message', async () => {
    const before = new Date().toISOString()
    // A device whose clock is four years fast: it made the call 10 s before it sent the batch.
    const answer = await post(`${running.relay.url}/v1/batch`, {
      sentAt: '2030-01-01T00:00:10.000Z',
      batch: [
        track({ messageId: 'skewed', originalTimestamp: '2030-01-01T00:00:00.000Z' }),
        track({ messageId: 'given', timestamp: '2019-05-05T05:05:05.005Z', originalTimestamp: '2030-01-01T00:00:00Z' }),
        track({ messageId: 'bare' }),
        track({ messageId: 'bad-original', originalTimestamp: 'soon' }),
      ],
    })
    expect(answer.body).toEqual({ success: true, accepted: 4, refused: [] })
    const after = new Date().toISOString()
    await waitFor(() => (running.receiver.received.length === 4 ? true : undefined))
    const delivered = new Map(running.receiver.received.map((r) => [r.body['messageId'], r.body['timestamp']]))
    const stored = new Map<string, any>(
      (await adminGet(`${running.relay.url}/v1/deliveries`)).body.deliveries.map((d: any) => [d.messageId, d.message]),
    )

    const receivedAt = stored.get('skewed').receivedAt as string
    expect(receivedAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/)
    expect(receivedAt >= before && receivedAt <= after).toBe(true)
    for (const id of ['given', 'bare', 'bad-original']) expect(stored.get(id).receivedAt).toBe(receivedAt)

    expect(delivered.get('skewed')).toBe(new Date(Date.parse(receivedAt) - 10_000).toISOString())
    expect(delivered.get('given')).toBe('2019-05-05T05:05:05.005Z')
    expect(delivered.get('bare')).toBe(receivedAt)
    expect(delivered.get('bad-original')).toBe(receivedAt)
  })

  it('refuses, with why, a timestamp an offset moves out of the years 0000–9999 (no delivery could send it)', async () => {
    const answer = await post(`${running.relay.url}/v1/batch`, {
      batch: [
        track({ messageId: 'year-minus-one', timestamp: '0000-01-01T00:00+01:00' }),
        track({ messageId: 'fine' }),
      ],
    })
    expect(answer.body).toMatchObject({ accepted: 1, refused: [{ index: 0 }] })
    expect(answer.body.refused[0].reason).toMatch(/timestamp/)
    await waitFor(() => (running.receiver.received.length === 1 ? true : undefined))
    expect(running.receiver.received.map((r) => r.body['messageId'])).toEqual(['fine'])
  })

  it('corrects a single call by its own sentAt, and overwrites a receivedAt the client sent', async () => {
    await post(`${running.relay.url}/v1/track`, {
      userId: 'u1',
      event: 'E',
      messageId: 'single',
      originalTimestamp: '2030-01-01T00:00:00.000Z',
      sentAt: '2030-01-01T00:01:00.000Z',
      receivedAt: '1999-01-01T00:00:00.000Z',
    })
    const { body } = await waitFor(() => running.receiver.received[0])
    const [delivery] = (await adminGet(`${running.relay.url}/v1/deliveries`)).body.deliveries
    expect(delivery.message.receivedAt).not.toBe('1999-01-01T00:00:00.000Z')
    expect(body['timestamp']).toBe(new Date(Date.parse(delivery.message.receivedAt) - 60_000).toISOString())
  })
})
