import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { validateRelayOptions } from '../../../src/relay/config/validate'
import { ORDERED_DEFAULT, ORDERED_KEY } from '../../../src/relay/destinations/ordered-setting'
import { RelayConfigError } from '../../../src/relay/errors'
import { orderKeyOf, orderedUserOf } from '../../../src/relay/store/ordering/order-key'
import { orderWaitText } from '../../../src/relay/console/order-wait'
import { ORDER_WAITING_METRIC } from '../../../src/relay/telemetry/order-metrics'
import { ORDER_LINES_EVERY_MS } from '../../../src/relay/delivery/order-lines'

// The ordering setting as the config checks it, and docs/delivery-controls.md's "Ordering" saying
// what the code says.

const source = (Webhooks: Record<string, unknown>) => ({
  sources: [{ name: 'web', writeKey: 'wk', destinations: { Webhooks } }],
})
const webhooks = [{ url: 'https://hooks.example.com/in' }]

describe('the ordered setting', () => {
  it('is kept as given, and the destination still gets its own settings only', () => {
    const options = validateRelayOptions(source({ webhooks, ordered: true }))
    expect(options.sources[0]!.destinations!['Webhooks']).toMatchObject({ webhooks, ordered: true })
  })

  it('refuses a value that is not a boolean, by its path, with every other problem', () => {
    let error: unknown
    try {
      validateRelayOptions(source({ webhooks: [{ url: 'ftp://x' }], ordered: 'yes' }))
    } catch (thrown) {
      error = thrown
    }
    expect(error).toBeInstanceOf(RelayConfigError)
    const problems = (error as RelayConfigError).problems
    expect(problems.map((p) => p.field)).toEqual([
      'sources[0].destinations.Webhooks.ordered',
      'sources[0].destinations.Webhooks.webhooks[0].url',
    ])
    expect(problems[0]!.message).toBe('must be true or false, got a string')
  })
})

describe('the ordering key', () => {
  it("is the userId's, else the anonymousId's, per source and destination", () => {
    expect(orderedUserOf({ userId: 'u', anonymousId: 'a' })).toBe('u')
    expect(orderedUserOf({ anonymousId: 'a' })).toBe('a')
    expect(orderedUserOf({ userId: '', anonymousId: 'a' })).toBe('a')
    expect(orderedUserOf({})).toBeUndefined()
    const key = orderKeyOf('web', 'Webhooks', { userId: 'u' })!
    expect(key).toMatch(/^[\w-]{22}$/)
    expect(orderKeyOf('web', 'Webhooks', { userId: 'u', anonymousId: 'x' })).toBe(key)
    expect(orderKeyOf('app', 'Webhooks', { userId: 'u' })).not.toBe(key)
    expect(orderKeyOf('web', 'Archive', { userId: 'u' })).not.toBe(key)
    // Names that would join alike stay apart.
    expect(orderKeyOf('a', 'b,c', { userId: 'd' })).not.toBe(orderKeyOf('a,b', 'c', { userId: 'd' }))
    expect(orderKeyOf('web', 'Webhooks', {})).toBeUndefined()
  })
})

describe('docs/delivery-controls.md, "Ordering"', () => {
  const doc = readFileSync(new URL('../../../docs/delivery-controls.md', import.meta.url), 'utf8')
  const section = doc.slice(doc.indexOf('## Ordering'))

  it('lists the setting with its rule and default as the code has them', () => {
    const rows = [...section.matchAll(/^\| `(\w+)` +\| `([^`]+)` +\| ([^|]+?) +\| `([^`]+)` +\|$/gm)]
    expect(rows.map((m) => [m[1], m[2], m[3], m[4]])).toEqual([
      [ORDERED_KEY, 'destinations.Webhooks', '`true` or `false`', String(ORDERED_DEFAULT)],
    ])
    expect(section).toContain('`sources[0].destinations.Webhooks.ordered: must be true or false, got a string`')
  })

  it("names the delivery log's words and the metric as the relay writes them", () => {
    expect(section).toContain(`\`${orderWaitText(41)}\``)
    expect(section).toContain(`\`${ORDER_WAITING_METRIC}\``)
    expect(section).toContain('`waitingBehind`')
  })

  it("says how often a held line is moved to its head's due time, as the relay does", () => {
    expect(section).toContain(`every ${ORDER_LINES_EVERY_MS / 1000} seconds\n  (\`ORDER_LINES_EVERY_MS\`)`)
  })
})
