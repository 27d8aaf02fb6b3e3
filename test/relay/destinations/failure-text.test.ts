import { describe, expect, it } from 'vitest'
import { describeFailure, describeRequest } from '../../../src/relay/destinations/failure-text'

describe('the text of a failure', () => {
  it('names each request by its error, or its status', () => {
    expect(describeRequest({ url: 'https://a.example/', status: 503, ms: 1 })).toBe('HTTP 503')
    expect(describeRequest({ url: 'https://a.example/', error: 'timed out after 5 ms', ms: 5 })).toBe(
      'timed out after 5 ms',
    )
    expect(describeRequest({ url: 'https://a.example/', ms: 1 })).toBe('failed')
  })

  it('joins every request of an attempt, showing each URL as asked', () => {
    const result = {
      ok: false,
      retryable: true,
      attempts: [
        { url: 'https://a.example/in?token=t', status: 503, ms: 1 },
        { url: 'https://b.example/', error: 'connect ECONNREFUSED', ms: 1 },
      ],
    }
    expect(describeFailure(result)).toBe(
      'https://a.example/in?token=t: HTTP 503; https://b.example/: connect ECONNREFUSED',
    )
    expect(describeFailure(result, (url) => new URL(url).origin)).toBe(
      'https://a.example: HTTP 503; https://b.example: connect ECONNREFUSED',
    )
    expect(describeFailure({ ok: false, retryable: false, attempts: [] })).toBe('no request was made')
  })
})
