import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { outcomeWriter } from '../../../src/relay/delivery/outcome-writer'
import type { AttemptOutcome } from '../../../src/relay/store/store'

beforeEach(() => {
  vi.useFakeTimers()
})
afterEach(() => {
  vi.useRealTimers()
})

const delivered = (id: number): AttemptOutcome => ({ id, at: 0, requests: [], next: { status: 'delivered' } })

describe('the outcome writer', () => {
  it('records the outcomes of many attempts in one write, and tells which sources to look at', async () => {
    const records: number[][] = []
    const written: { sources: string[]; afterFailures: boolean }[] = []
    const writer = outcomeWriter(
      { record: async (outcomes) => void records.push(outcomes.map((o) => o.id)) },
      {
        written: (batch, afterFailures) => written.push({ sources: batch.map((b) => b.source), afterFailures }),
        settled: () => {},
      },
    )
    writer.add(1, () => ({ source: 'web', outcome: delivered(1) }))
    writer.add(2, () => ({ source: 'ios', outcome: delivered(2) }))
    await vi.advanceTimersByTimeAsync(5)
    expect(records).toEqual([[1, 2]])
    expect(written).toEqual([{ sources: ['web', 'ios'], afterFailures: false }])
  })

  it('keeps the outcomes through failed writes (attempts paused) and says when it recovered', async () => {
    let failing = true
    const records: number[][] = []
    const written: boolean[] = []
    const writer = outcomeWriter(
      {
        record: async (outcomes) => {
          if (failing) throw new Error('disk full')
          records.push(outcomes.map((o) => o.id))
        },
      },
      { written: (_batch, afterFailures) => written.push(afterFailures), settled: () => {} },
    )
    writer.add(1, () => ({ source: 'web', outcome: delivered(1) }))
    await vi.advanceTimersByTimeAsync(5)
    expect(writer.failing).toBe(true)
    writer.add(2, () => ({ source: 'web', outcome: delivered(2) }))
    failing = false
    await vi.advanceTimersByTimeAsync(50)
    expect(records).toEqual([[1, 2]])
    expect(written).toEqual([true])
    expect(writer.failing).toBe(false)
  })
})
