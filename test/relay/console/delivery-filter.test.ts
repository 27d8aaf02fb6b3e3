import { describe, expect, it } from 'vitest'
import { parseFilter, queryValues } from '../../../src/relay/console/delivery-filter'
import { HttpError } from '../../../src/relay/http/http-error'

const QUERY = { kind: 'query', code: 'ERR_INVALID_QUERY' } as const
const BODY = { kind: 'body', code: 'ERR_INVALID_BODY', prefix: 'filter.' } as const

function fromQuery(text: string, others: string[] = ['cursor', 'limit']) {
  return parseFilter(queryValues(new URLSearchParams(text), QUERY.code), QUERY, others)
}

function refusal(run: () => unknown): { status: number; code: string; message: string } {
  try {
    run()
  } catch (error) {
    if (error instanceof HttpError) return { status: error.status, code: error.code, message: error.message }
    throw error
  }
  throw new Error('not refused')
}

describe('the delivery filter', () => {
  it('reads every field', () => {
    expect(
      fromQuery(
        'status=failed&source=web&messageId=m-1&userId=u-1&event=Order%20Completed&type=track&url=https%3A%2F%2Fh.example%2Fin&since=2025-11-24T10:00:00Z&until=1764021900000',
      ),
    ).toEqual({
      status: 'failed',
      source: 'web',
      messageId: 'm-1',
      userId: 'u-1',
      event: 'Order Completed',
      type: 'track',
      url: 'https://h.example/in',
      since: Date.parse('2025-11-24T10:00:00Z'),
      until: 1764021900000,
    })
    expect(fromQuery('since=2026-11-24')).toEqual({ since: Date.parse('2026-11-24T00:00:00Z') })
    expect(fromQuery('since=2026-11-24T10:00:00.5%2B01:00')).toEqual({ since: Date.parse('2026-11-24T09:00:00.5Z') })
  })

  it('reads a time ago (90s, 5m, 2h, 7d) as that long before now', () => {
    const now = Date.parse('2026-11-24T12:00:00Z')
    const ago = (text: string) => parseFilter(queryValues(new URLSearchParams(text), QUERY.code), QUERY, [], now)
    expect(ago('since=5m&until=90s')).toEqual({ since: now - 5 * 60_000, until: now - 90_000 })
    expect(ago('since=7d&until=2h')).toEqual({ since: now - 7 * 86_400_000, until: now - 2 * 3_600_000 })
    expect(refusal(() => ago('since=5m&until=7d')).message).toBe('since must not be after until')
    expect(refusal(() => ago('since=5w')).message).toMatch(
      /^since must be .* or a time ago \(90s, 5m, 2h, 7d\), got "5w"$/,
    )
  })

  it('names an unknown parameter (a typo is never ignored)', () => {
    expect(refusal(() => fromQuery('stauts=failed'))).toEqual({
      status: 400,
      code: 'ERR_INVALID_QUERY',
      message: expect.stringMatching(/^unknown parameter "stauts"; allowed: status, source, .*cursor, limit$/),
    })
    expect(refusal(() => fromQuery('before=100')).message).toMatch(/^unknown parameter "before"/)
  })

  it.each([
    ['status=lost', /^status must be one of pending, delivered, failed, filtered, got "lost"$/],
    ['type=click', /^type must be one of identify, track, .*got "click"$/],
    ['since=yesterday', /^since must be an ISO 8601 time .*got "yesterday"$/],
    ['until=2026-11-24T10:00:00', /^until must be an ISO 8601 time/], // no offset: which zone?
    ['since=2026-02-30T00:00:00Z', /^since must be an ISO 8601 time/], // no such day
    ['limit=5&x=', /^unknown parameter "x"/],
    ['messageId=', /^messageId must be a non-empty string/],
    ['userId=a%00b', /userId/],
    ['since=2000&until=1000', /^since must not be after until$/],
    ['status=failed&status=pending', /^parameter "status" is given more than once$/],
  ])('refuses %s with a 400 naming it', (query, message) => {
    const refused = refusal(() => fromQuery(query))
    expect(refused.status).toBe(400)
    expect(refused.message).toMatch(message)
  })

  it('names the fields of a body filter by their path', () => {
    const values = new Map<string, unknown>(Object.entries({ status: 'failed', sauce: 'web' }))
    expect(refusal(() => parseFilter(values, BODY))).toMatchObject({
      code: 'ERR_INVALID_BODY',
      message: expect.stringMatching(/^unknown field "filter.sauce"/),
    })
    expect(refusal(() => parseFilter(new Map([['source', 7]]), BODY)).message).toMatch(
      /^filter.source must be a non-empty string/,
    )
    expect(parseFilter(new Map<string, unknown>([['since', 1000]]), BODY)).toEqual({ since: 1000 })
  })

  it('lets the page drop the empty values its form sends for "any"', () => {
    const values = queryValues(new URLSearchParams('status=&source=web'), QUERY.code, { dropEmpty: true })
    expect(parseFilter(values, QUERY)).toEqual({ source: 'web' })
  })
})
