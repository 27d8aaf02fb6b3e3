import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { LIMIT_TIMINGS } from '../../../src/relay/store/endpoint-limits'
import { slotLeaseMs } from '../../../src/relay/delivery/limits/slot-lease'
import { TARGET_LIMIT_BOUNDS, TARGET_LIMIT_KEYS } from '../../../src/relay/destinations/limit-settings'
import { RELAY_DEFAULTS } from '../../../src/relay/config/defaults'
import { heldText } from '../../../src/relay/store/endpoint-held'

// docs/delivery-controls.md says what the code says: its settings table, and the figures of its
// rules and costs.
describe('docs/delivery-controls.md', () => {
  const doc = readFileSync(new URL('../../../docs/delivery-controls.md', import.meta.url), 'utf8')
  const section = doc.slice(doc.indexOf('## Settings'), doc.indexOf('## The rules'))
  const rows = [...section.matchAll(/^\| `(\w+)` +\| ([^|]+?) +\| ([^|]+?) +\| ([^|]+?) +\|$/gm)].map((m) => ({
    key: m[1]!,
    where: m[2]!,
    rule: m[3]!,
    default: m[4]!,
  }))

  it('lists every limit the settings take, with its rule as the code checks it', () => {
    expect(rows.map((row) => row.key)).toEqual([...TARGET_LIMIT_KEYS])
    const rule = Object.fromEntries(rows.map((row) => [row.key, row.rule]))
    expect(rule['ratePerSecond']).toBe(`a number above 0, at most ${TARGET_LIMIT_BOUNDS.maxRatePerSecond}`)
    expect(rule['maxInFlight']).toBe(`an integer from 1 to ${TARGET_LIMIT_BOUNDS.maxInFlight}`)
    expect(rows.every((row) => row.default === 'none')).toBe(true)
  })

  it('gives the figures of its rules and costs as the code has them', () => {
    expect(LIMIT_TIMINGS.burstMs).toBe(1000)
    expect(doc).toContain("with at\n  most one second's worth in a burst")
    expect(doc).toContain(`in small chunks (${LIMIT_TIMINGS.tokenChunkMs} ms' worth, at least one)`)
    expect(LIMIT_TIMINGS.tokenLifeMs).toBe(1000)
    expect(doc).toContain('drops what it has not used\n  within a second')
    expect(doc).toContain(`asked again every ${LIMIT_TIMINGS.slotRetryMs} ms`)
    expect(LIMIT_TIMINGS.keepSlotMs).toBe(1000)
    expect(doc).toContain('for its next delivery for up to a second after taking it')
    expect(LIMIT_TIMINGS.unusedSlotMs).toBe(1000)
    expect(doc).toContain('any it has not used within a\n  second')
    const timeout = RELAY_DEFAULTS.webhookTimeout
    expect(slotLeaseMs(timeout)).toBe(2 * timeout + 5000)
    expect(doc).toContain(`(\`2 × webhookTimeout + 5 s\`, ${slotLeaseMs(timeout) / 1000} s by default)`)
  })

  it('words why a delivery waits as the delivery view does', () => {
    const url = 'https://hooks.example.com/in'
    const flat = doc.replace(/\n +/g, ' ')
    expect(flat).toContain(`\`${heldText({ reason: 'rate', url, ratePerSecond: 50 })}\``)
    expect(flat).toContain(`\`${heldText({ reason: 'in_flight', url, maxInFlight: 4 })}\``)
    expect(flat).toContain(`\`${heldText({ reason: 'retry_after', url, waitMs: 30_000 })}\``)
  })
})
