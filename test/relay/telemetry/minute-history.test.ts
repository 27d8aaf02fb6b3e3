import { describe, expect, it } from 'vitest'
import type { SettledAttempt } from '../../../src/relay/events/kinds'
import { lastHourOf, MinuteHistory } from '../../../src/relay/telemetry/minute-history'

const START = Date.parse('2026-11-26T19:00:00.000Z')

function attempt(status: 'delivered' | 'pending' | 'failed', ms: number): SettledAttempt {
  const next =
    status === 'delivered'
      ? { status }
      : status === 'pending'
        ? { status, nextAttemptAt: 0, error: 'HTTP 503' }
        : { status, error: 'HTTP 404' }
  return { source: 'web', destination: 'Webhooks', ms, outcome: { id: 1, at: START, requests: [], next } as never }
}

describe('MinuteHistory', () => {
  it('keeps the last hour minute by minute: ingested, delivered, dead letters and the p99 attempt time', () => {
    let now = START + 5_000
    const history = new MinuteHistory(() => now)
    history.count({ type: 'ingested', source: 'web', outcome: { accepted: 7, refused: [], filtered: 0 } })
    for (let i = 0; i < 99; i++) history.count({ type: 'attempt', attempt: attempt('delivered', 10) })
    history.count({ type: 'attempt', attempt: attempt('failed', 2_000) })
    now += 60_000
    history.count({ type: 'attempt', attempt: attempt('pending', 100) })
    history.count({ type: 'ingested', source: 'web', outcome: { accepted: 2, refused: [], filtered: 0 } })
    const hour = history.lastHour()
    expect(hour).toHaveLength(60)
    expect(hour.at(-1)).toMatchObject({ at: START + 60_000, ingested: 2, delivered: 0, deadLettered: 0 })
    expect(hour.at(-2)).toMatchObject({ at: START, ingested: 7, delivered: 99, deadLettered: 1 })
    // The 99th of 100 attempts took 10 ms: read within a bucket (20 %) of it.
    expect(hour.at(-2)!.p99Ms).toBeGreaterThanOrEqual(10)
    expect(hour.at(-2)!.p99Ms).toBeLessThanOrEqual(12)
    expect(hour.at(-1)!.p99Ms).toBeGreaterThanOrEqual(100)
    expect(hour.at(-1)!.p99Ms).toBeLessThanOrEqual(125)
    // Quiet minutes read as zeros, with no time.
    expect(hour[0]).toEqual({
      at: START + 60_000 - 59 * 60_000,
      ingested: 0,
      delivered: 0,
      deadLettered: 0,
      p99Ms: undefined,
    })
  })

  it('forgets what is older than the hour', () => {
    let now = START
    const history = new MinuteHistory(() => now)
    history.count({ type: 'ingested', source: 'web', outcome: { accepted: 5, refused: [], filtered: 0 } })
    now += 59 * 60_000
    expect(history.lastHour()[0]).toMatchObject({ at: START, ingested: 5 })
    now += 60_000
    expect(history.lastHour().every((minute) => minute.ingested === 0)).toBe(true)
  })

  it("adds up several processes' minutes (--workers), the p99 read from their summed times", () => {
    const now = START + 5_000
    const [fast, slow] = [new MinuteHistory(() => now), new MinuteHistory(() => now)]
    fast.count({ type: 'ingested', source: 'web', outcome: { accepted: 3, refused: [], filtered: 0 } })
    slow.count({ type: 'ingested', source: 'web', outcome: { accepted: 4, refused: [], filtered: 0 } })
    for (let i = 0; i < 98; i++) fast.count({ type: 'attempt', attempt: attempt('delivered', 10) })
    for (let i = 0; i < 2; i++) slow.count({ type: 'attempt', attempt: attempt('failed', 2_000) })
    // Through JSON, as a worker reports them to the primary.
    const counts = JSON.parse(JSON.stringify([...fast.counts(), ...slow.counts()]))
    const minute = lastHourOf(counts, now).at(-1)!
    expect(minute).toMatchObject({ at: START, ingested: 7, delivered: 98, deadLettered: 2 })
    // 2 of 100 attempts took 2 s: the 99th is one of them, though neither process alone says so.
    expect(minute.p99Ms).toBeGreaterThanOrEqual(2_000)
    expect(fast.lastHour().at(-1)!.p99Ms).toBeLessThanOrEqual(12)
    expect(lastHourOf(counts, now)).toHaveLength(60)
  })
})
