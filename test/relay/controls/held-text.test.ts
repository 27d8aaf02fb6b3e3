import { describe, expect, it } from 'vitest'
import type { EndpointLimitState } from '../../../src/relay/store/endpoint-limits'
import { waitingText } from '../../../src/relay/store/endpoint-held'

// Why a due delivery waits, as the delivery view reads it from the store's shared budget
// (docs/delivery-controls.md, "Seeing them").

const NOW = 1_700_000_000_000
const URL = 'https://hooks.example.com/in'
const state = (fields: Partial<EndpointLimitState>): EndpointLimitState => ({
  url: URL,
  ratePerSecond: undefined,
  maxInFlight: undefined,
  inFlight: 0,
  heldUntil: 0,
  tat: 0,
  ...fields,
})

describe('waitingText', () => {
  it('names the rate while its burst is spent, and nothing once there is room', () => {
    expect(waitingText([state({ ratePerSecond: 50, tat: NOW + 990 })], NOW)).toBe(`held: rate limit of 50/s on ${URL}`)
    expect(waitingText([state({ ratePerSecond: 50, tat: NOW + 500 })], NOW)).toBeUndefined()
    expect(waitingText([state({ ratePerSecond: 50, tat: NOW - 60_000 })], NOW)).toBeUndefined()
    // A rate below one a second: held for the whole interval after a request, free after it.
    expect(waitingText([state({ ratePerSecond: 0.5, tat: NOW + 1500 })], NOW)).toBe(
      `held: rate limit of 0.5/s on ${URL}`,
    )
    expect(waitingText([state({ ratePerSecond: 0.5, tat: NOW })], NOW)).toBeUndefined()
  })

  it('names every slot taken, and a receiver’s Retry-After before either', () => {
    expect(waitingText([state({ maxInFlight: 4, inFlight: 4 })], NOW)).toBe(`held: 4 in flight on ${URL}`)
    expect(waitingText([state({ maxInFlight: 4, inFlight: 3 })], NOW)).toBeUndefined()
    expect(waitingText([state({ maxInFlight: 4, inFlight: 4, heldUntil: NOW + 29_500 })], NOW)).toBe(
      `held: receiver asked to retry after 30 s (429) on ${URL}`,
    )
  })

  it('names each URL that holds the delivery back', () => {
    const other = 'https://other.example.com/in'
    const states = [state({ maxInFlight: 1, inFlight: 1 }), state({ url: other, ratePerSecond: 1, tat: NOW + 1000 })]
    expect(waitingText(states, NOW)).toBe(`held: 1 in flight on ${URL}; held: rate limit of 1/s on ${other}`)
  })
})
