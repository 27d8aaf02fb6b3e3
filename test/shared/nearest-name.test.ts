import { describe, expect, it } from 'vitest'
import { didYouMean, nearestName } from '../../src/shared/nearest-name'

const OPTIONS = ['endpoint', 'flushAt', 'flushInterval', 'maxQueueSize', 'timeout', 'destination', 'destinations']

describe('nearestName', () => {
  it.each([
    ['flsuhAt', 'flushAt'], // two neighbours swapped
    ['flushat', 'flushAt'], // case
    ['endpont', 'endpoint'], // a letter missing
    ['destinatons', 'destinations'],
    ['destination', 'destination'],
    ['timeOut', 'timeout'],
  ])('%s → %s', (given, expected) => {
    expect(nearestName(given, OPTIONS)).toBe(expected)
  })

  it('suggests nothing when no name is near (a wrong guess misleads)', () => {
    expect(nearestName('host', OPTIONS)).toBeUndefined()
    expect(nearestName('x', OPTIONS)).toBeUndefined()
    expect(nearestName('anything', [])).toBeUndefined()
  })

  it('didYouMean words the hint, or says nothing', () => {
    expect(didYouMean('flushAtt', OPTIONS)).toBe(' (did you mean `flushAt`?)')
    expect(didYouMean('zzz', OPTIONS)).toBe('')
  })
})
