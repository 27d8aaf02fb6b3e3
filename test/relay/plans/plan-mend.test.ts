import { describe, expect, it } from 'vitest'
import { withoutPointers } from '../../../src/relay/features/plans/plan-mend'

// omit's copy (docs/plans.md): the values at the pointers go from a copy; the value checked is
// never changed, and what no removal touches is shared rather than cloned.

describe('withoutPointers', () => {
  it('removes nested leaves and array items from a copy, leaving the original as it was', () => {
    const value = JSON.parse(
      '{"revenue":"nine","address":{"zip":5,"city":"Oslo"},"items":[1,"x",2,"y"],"tags":{"a":1}}',
    )
    const before = structuredClone(value)
    const copy = withoutPointers(value, ['/revenue', '/address/zip', '/items/1', '/items/3']) as any
    expect(copy).toEqual({ address: { city: 'Oslo' }, items: [1, 2], tags: { a: 1 } })
    expect(value).toEqual(before)
    // Untouched branches are shared; every container on a removal's way is a new one.
    expect(copy.tags).toBe(value.tags)
    expect(copy.address).not.toBe(value.address)
    expect(copy.items).not.toBe(value.items)
  })

  it('copies a container once for several removals under it, and ignores pointers to nothing', () => {
    const value = { a: { b: 1, c: 2, d: 3 }, list: [{ x: 1 }] }
    const copy = withoutPointers(value, ['/a/b', '/a/c', '/a/b', '/missing/deep', '/list/5', '/a/d/e']) as any
    expect(copy).toEqual({ a: { d: 3 }, list: [{ x: 1 }] })
    expect(value).toEqual({ a: { b: 1, c: 2, d: 3 }, list: [{ x: 1 }] })
  })

  it('follows escaped tokens and own keys only: a "__proto__" key is a plain property', () => {
    const value = JSON.parse('{"a/b":{"~k":1,"keep":2},"__proto__":{"polluted":1}}')
    const copy = withoutPointers(value, ['/a~1b/~0k', '/__proto__/polluted', '/constructor/name']) as any
    expect(JSON.stringify(copy)).toBe('{"a/b":{"keep":2},"__proto__":{}}')
    expect(JSON.stringify(value)).toBe('{"a/b":{"~k":1,"keep":2},"__proto__":{"polluted":1}}')
    expect(({} as any).polluted).toBeUndefined()
  })
})
