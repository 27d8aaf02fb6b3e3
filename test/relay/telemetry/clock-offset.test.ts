import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { CLOCK_OFFSET_INTERVAL_MS, ClockOffset } from '../../../src/relay/telemetry/clock-offset'
import { addLogSink, type LogEvent } from '../../../src/relay/log'
import { RelayMetrics } from '../../../src/relay/telemetry/metrics'
import { StoreHealth } from '../../../src/relay/telemetry/health'
import { openSqliteStore } from '../../../src/relay/store/sqlite/sqlite-store'
import { parseExposition, sampleValue } from './prometheus'

// The relay's clock is the fake timers' (Date.now); the database's is that plus `databaseAhead`,
// read after a round trip of `roundTripMs`.
let databaseAhead = 0
const roundTripMs = 20
const store = {
  databaseNow: async () => {
    await new Promise((resolve) => setTimeout(resolve, roundTripMs / 2))
    const now = Date.now() + databaseAhead
    await new Promise((resolve) => setTimeout(resolve, roundTripMs / 2))
    return now
  },
}

const events: LogEvent[] = []
let removeSink: () => void
beforeEach(() => {
  vi.useFakeTimers({ now: Date.parse('2026-01-01T00:00:00.000Z') })
  databaseAhead = 0
  events.length = 0
  removeSink = addLogSink((event) => events.push(event))
})
afterEach(() => {
  removeSink()
  vi.useRealTimers()
})

/** One measurement, its round trip run on the fake timers. */
async function measured(clock: ClockOffset): Promise<void> {
  await Promise.all([clock.measure(), vi.advanceTimersByTimeAsync(roundTripMs)])
}

const warnings = () => events.filter((e) => e.level === 'warn' && e.fields.event === 'clock-offset')

describe("a relay's offset to the database's clock", () => {
  it('is measured at start and every minute, from the middle of the round trip', async () => {
    const clock = new ClockOffset({ store })
    expect(clock.seconds).toBeUndefined()
    databaseAhead = 300
    clock.start()
    await vi.advanceTimersByTimeAsync(roundTripMs)
    expect(clock.seconds).toBe(0.3)
    databaseAhead = -250
    await vi.advanceTimersByTimeAsync(CLOCK_OFFSET_INTERVAL_MS - 1)
    expect(clock.seconds).toBe(0.3) // not measured again yet
    await vi.advanceTimersByTimeAsync(roundTripMs + 1)
    expect(clock.seconds).toBe(-0.25)
    clock.stop()
    databaseAhead = 5000
    await vi.advanceTimersByTimeAsync(2 * CLOCK_OFFSET_INTERVAL_MS)
    expect(clock.seconds).toBe(-0.25)
    expect(warnings()).toEqual([])
  })

  it('is warned about past 1 s, saying which clock is ahead', async () => {
    const clock = new ClockOffset({ store })
    databaseAhead = 1000
    await measured(clock)
    expect(warnings()).toEqual([]) // 1 s exactly: within
    databaseAhead = -40_000 // the relay is 40 s ahead
    await measured(clock)
    databaseAhead = 1500
    await measured(clock)
    expect(warnings().map((e) => [e.msg, e.fields.offsetSeconds])).toEqual([
      [expect.stringContaining("this relay's clock is 40.0 s ahead of the database's"), -40],
      [expect.stringContaining("this relay's clock is 1.5 s behind the database's"), 1.5],
    ])
  })

  it('keeps the last offset when the database cannot be read', async () => {
    let failing = false
    const clock = new ClockOffset({
      store: { databaseNow: () => (failing ? Promise.reject(new Error('down')) : store.databaseNow()) },
    })
    databaseAhead = 200
    await measured(clock)
    failing = true
    await clock.measure()
    expect(clock.seconds).toBe(0.2)
  })

  it('is exposed as tracklet_clock_offset_seconds (NaN until measured)', async () => {
    const sqlite = await openSqliteStore(':memory:')
    try {
      const metrics = new RelayMetrics({
        store: sqlite,
        sources: [],
        health: new StoreHealth({ probe: async () => {} }),
      })
      const clock = new ClockOffset({ store })
      metrics.clockOffset(() => clock.seconds)
      const offset = async () =>
        sampleValue(parseExposition((await metrics.scrape()).text), 'tracklet_clock_offset_seconds')
      expect(await offset()).toBeNaN()
      databaseAhead = -40_000
      await measured(clock)
      expect(await offset()).toBe(-40)
    } finally {
      await sqlite.close()
    }
  })
})
