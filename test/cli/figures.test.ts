import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { GAUGE_AGGREGATION } from '../../src/cli/workers/figures'

// How each gauge adds up over the workers of `tracklet relay --workers N` is said in
// docs/operations.md: every gauge the primary aggregates in a way of its own is named there.
describe('the gauges of --workers, as docs/operations.md says they add up', () => {
  const operations = readFileSync(new URL('../../docs/operations.md', import.meta.url), 'utf8')
  const paragraph = operations.slice(operations.indexOf('Under\n`tracklet relay --workers N`'))
  it.each(Object.entries(GAUGE_AGGREGATION))('%s (%s) is named', (name) => {
    expect(paragraph.slice(0, 800)).toContain(`\`${name}\``)
  })
})
