import { describe, expect, it } from 'vitest'
import { EventRates } from '../../../src/relay/telemetry/rates'

describe('EventRates', () => {
  it('gives events per minute over the window, and forgets events older than it', () => {
    let now = 1_000_000
    const rates = new EventRates<'delivered' | 'retried'>(5 * 60_000, () => now)
    now += 60_000
    rates.add('delivered', 30)
    // One minute since the start: 30 a minute.
    expect(rates.perMinute('delivered')).toBe(30)
    expect(rates.perMinute('retried')).toBe(0)
    now += 4 * 60_000
    rates.add('delivered', 20)
    // Five minutes, 50 events.
    expect(rates.perMinute('delivered')).toBe(10)
    now += 2 * 60_000
    // The first 30 are out of the window.
    expect(rates.perMinute('delivered')).toBe(4)
  })
})
