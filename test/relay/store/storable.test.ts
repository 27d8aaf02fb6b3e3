import { describe, expect, it } from 'vitest'
import { findUnstorable } from '../../../src/relay/store/storable'

describe('findUnstorable', () => {
  it('names where a number JSON cannot carry sits, however deep, in objects and arrays', () => {
    const message = JSON.parse(
      '{"type":"track","messageId":"m","properties":{"ok":1,"items":[{"price":2},{"price":-1e400}]}}',
    ) as Record<string, unknown>
    expect(findUnstorable(message)).toBe(
      'properties.items[1].price is a number JSON cannot carry (such as 1e400, which parses as Infinity)',
    )
    expect(findUnstorable(JSON.parse('{"type":"track","messageId":"m","n":[1,[2,1e999]]}'))).toMatch(/^n\[1\]\[1\] /)
  })

  it('passes a message whose numbers are all finite', () => {
    expect(
      findUnstorable({ type: 'track', messageId: 'm', properties: { a: [1, 2.5, { b: -3 }], c: null, d: 'x' } }),
    ).toBeUndefined()
  })
})
