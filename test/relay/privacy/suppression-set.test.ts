import { describe, expect, it } from 'vitest'
import { privacyCheck, SUPPRESSED_REASON } from '../../../src/relay/features/privacy/privacy-check'
import { SuppressionSet } from '../../../src/relay/features/privacy/suppression-set'
import type { IngestCheck } from '../../../src/relay/ingest/ingest-check'

describe('the suppressed users as ingest looks them up', () => {
  const set = new SuppressionSet([
    { userId: 'everywhere', at: 1 },
    { userId: 'web-only', source: 'web', at: 1 },
    { userId: 'both', source: 'web', at: 1 },
    { userId: 'both', source: 'shop', at: 1 },
  ])

  it('suppresses a user of every source on each source, and one of a source on that source only', () => {
    expect(set.has('everywhere', 'web')).toBe(true)
    expect(set.has('everywhere', 'any')).toBe(true)
    expect(set.has('web-only', 'web')).toBe(true)
    expect(set.has('web-only', 'shop')).toBe(false)
    expect(set.has('both', 'shop')).toBe(true)
    expect(set.has('someone', 'web')).toBe(false)
    expect(set.has(undefined, 'web')).toBe(false)
    expect(set.size).toBe(3)
  })

  it('lets a suppression of every source win over one of a source, in either order', () => {
    const later = new SuppressionSet([
      { userId: 'u', source: 'web', at: 1 },
      { userId: 'u', at: 2 },
    ])
    expect(later.has('u', 'shop')).toBe(true)
  })
})

describe('the privacy check', () => {
  it('blocks a suppressed user before the inner check sees the message (no violation is kept of it)', () => {
    const seen: unknown[] = []
    const inner: IngestCheck = (message) => {
      seen.push(message['userId'])
      return undefined
    }
    const set = new SuppressionSet([{ userId: 'gone', at: 1 }])
    const check = privacyCheck({ suppressed: () => set, consentOf: () => undefined }, inner)
    const source = { name: 'web', destinations: ['Webhooks'] }
    expect(check({ type: 'track', userId: 'gone', event: 'E' }, source)).toMatchObject({ blocked: SUPPRESSED_REASON })
    expect(check({ type: 'track', userId: 'kept', event: 'E' }, source)).toBeUndefined()
    expect(seen).toEqual(['kept'])
  })
})
