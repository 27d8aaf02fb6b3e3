import { describe, expect, it } from 'vitest'
import { BodyBuffers } from '../../src/sdk/body-buffers'

describe('BodyBuffers', () => {
  it('hands a released buffer out again instead of allocating a new one', () => {
    const buffers = new BodyBuffers(2, 100)
    const first = buffers.acquire(10)
    expect(first.length).toBe(100)
    expect(buffers.acquire(100)).not.toBe(first)
    buffers.release(first)
    expect(buffers.acquire(50)).toBe(first)
  })

  it('keeps at most `keep` free buffers', () => {
    const buffers = new BodyBuffers(1, 100)
    const [a, b] = [buffers.acquire(1), buffers.acquire(1)]
    buffers.release(a)
    buffers.release(b)
    expect(buffers.acquire(1)).toBe(a)
    expect(buffers.acquire(1)).not.toBe(b)
  })

  it('gives a larger body a buffer of its own and never keeps it', () => {
    const buffers = new BodyBuffers(2, 100)
    const large = buffers.acquire(150)
    expect(large.length).toBe(150)
    buffers.release(large)
    expect(buffers.acquire(150)).not.toBe(large)
    expect(buffers.acquire(10).length).toBe(100)
  })
})
