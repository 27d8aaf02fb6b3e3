import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { BatchedWriter, type BatchedWriterOptions, eachInTurn } from '../../../src/relay/delivery/batched-writer'

beforeEach(() => {
  vi.useFakeTimers()
})
afterEach(() => {
  vi.useRealTimers()
})

/** A writer of numbers by name whose store fails while `failing` is set, noting each write. */
function setup(options: Partial<BatchedWriterOptions<string, number>> = {}) {
  const writes: [string, number][][] = []
  const failures: { left: string[]; retryMs: number }[] = []
  const wrote: { values: number[]; afterFailures: boolean }[] = []
  const state = { failing: false, settled: 0 }
  const writer = new BatchedWriter<string, number>({
    write: async (batch) => {
      if (state.failing) throw new Error('the database is unavailable')
      writes.push([...batch])
      batch.clear()
    },
    intervalMs: 5,
    failed: (_error, left, retryMs) => failures.push({ left: [...left.keys()], retryMs }),
    wrote: (values, afterFailures) => wrote.push({ values: [...values], afterFailures }),
    settled: () => state.settled++,
    ...options,
  })
  return { writer, writes, failures, wrote, state }
}

describe('the batched writer', () => {
  it('writes what arrives within the interval in one write, in arrival order', async () => {
    const { writer, writes } = setup()
    writer.add('a', () => 1)
    writer.add('b', () => 2)
    await vi.advanceTimersByTimeAsync(4)
    expect(writes).toEqual([])
    writer.add('c', () => 3)
    await vi.advanceTimersByTimeAsync(1)
    expect(writes).toEqual([
      [
        ['a', 1],
        ['b', 2],
        ['c', 3],
      ],
    ])
    expect(writer.busy).toBe(false)
  })

  it('folds an entry into the one queued under the same key', async () => {
    const { writer, writes } = setup()
    writer.add('a', () => 1)
    writer.add('a', (queued) => (queued ?? 0) + 10)
    expect(writer.queued('a')).toBe(11)
    await vi.advanceTimersByTimeAsync(5)
    expect(writes).toEqual([[['a', 11]]])
  })

  it('writes an urgent entry at once', async () => {
    const { writer, writes } = setup()
    writer.add('a', () => 1, true)
    await vi.advanceTimersByTimeAsync(0)
    expect(writes).toEqual([[['a', 1]]])
  })

  it('runs one write at a time: what comes during a write goes in the next', async () => {
    let finish: () => void = () => {}
    const batches: string[][] = []
    const { writer } = setup({
      write: async (batch) => {
        batches.push([...batch.keys()])
        if (batches.length === 1) await new Promise<void>((resolve) => (finish = resolve))
        batch.clear()
      },
    })
    writer.add('a', () => 1)
    await vi.advanceTimersByTimeAsync(5)
    writer.add('b', () => 2)
    await vi.advanceTimersByTimeAsync(50)
    expect(batches).toEqual([['a']])
    finish()
    await vi.advanceTimersByTimeAsync(5)
    expect(batches).toEqual([['a'], ['b']])
  })

  it('keeps what failed ahead of what came since, backs off, and says when it recovers', async () => {
    const { writer, writes, failures, wrote, state } = setup()
    state.failing = true
    writer.add('a', () => 1)
    await vi.advanceTimersByTimeAsync(5)
    expect(failures).toEqual([{ left: ['a'], retryMs: 50 }])
    expect(writer.failing).toBe(true)
    writer.add('b', () => 2)
    // The next write waits for the back-off, not the interval; a second failure doubles it.
    await vi.advanceTimersByTimeAsync(49)
    expect(failures).toHaveLength(1)
    await vi.advanceTimersByTimeAsync(1)
    expect(failures).toEqual([
      { left: ['a'], retryMs: 50 },
      { left: ['a', 'b'], retryMs: 100 },
    ])
    state.failing = false
    writer.add('c', () => 3)
    await vi.advanceTimersByTimeAsync(100)
    expect(writes).toEqual([
      [
        ['a', 1],
        ['b', 2],
        ['c', 3],
      ],
    ])
    expect(wrote).toEqual([{ values: [1, 2, 3], afterFailures: true }])
    expect(writer.failing).toBe(false)
  })

  it('merges an entry kept after a failure with the one that came under its key during the write', async () => {
    let fail: (error: Error) => void = () => {}
    const written: [string, number][][] = []
    const { writer } = setup({
      merge: (kept, since) => kept + (since ?? 0),
      write: async (batch) => {
        if (written.length === 0 && fail !== undefined) {
          written.push([])
          await new Promise<void>((_resolve, reject) => (fail = reject))
        }
        written.push([...batch])
        batch.clear()
      },
    })
    writer.add('a', () => 1)
    await vi.advanceTimersByTimeAsync(5)
    writer.add('a', () => 10) // while the first write is under way
    fail(new Error('the database is unavailable'))
    await vi.advanceTimersByTimeAsync(50)
    expect(written.at(-1)).toEqual([['a', 11]])
  })

  it('written one at a time (eachInTurn), keeps only the entries not written', async () => {
    const written: string[] = []
    let failOn: string | undefined = 'b'
    const { writer, failures } = setup({
      write: eachInTurn(async (key) => {
        if (key === failOn) throw new Error('no')
        written.push(key)
      }),
    })
    writer.add('a', () => 1)
    writer.add('b', () => 2)
    writer.add('c', () => 3)
    await vi.advanceTimersByTimeAsync(5)
    expect(written).toEqual(['a'])
    expect(failures[0]!.left).toEqual(['b', 'c'])
    failOn = undefined
    await vi.advanceTimersByTimeAsync(50)
    expect(written).toEqual(['a', 'b', 'c'])
  })

  it('flush() writes at once and waits for a write under way', async () => {
    const { writer, writes, state } = setup()
    writer.add('a', () => 1)
    await writer.flush()
    expect(writes).toEqual([[['a', 1]]])
    expect(state.settled).toBe(1)
    await writer.flush() // nothing queued: resolves at once
    expect(writes).toHaveLength(1)
  })

  it('stop() writes what is queued and arms no timer after', async () => {
    const { writer, writes, state } = setup()
    writer.add('a', () => 1)
    await writer.stop()
    expect(writes).toEqual([[['a', 1]]])
    state.failing = true
    writer.add('b', () => 2)
    await vi.advanceTimersByTimeAsync(60_000)
    expect(writes).toHaveLength(1)
    expect(vi.getTimerCount()).toBe(0)
    expect(writer.busy).toBe(true) // kept, not lost: a flush() would still write it
  })
})
