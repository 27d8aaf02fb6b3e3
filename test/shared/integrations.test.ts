import { describe, expect, it } from 'vitest'
import { isDestinationEnabled, mergeIntegrations } from '../../src/shared/integrations'

describe('isDestinationEnabled', () => {
  it('enables every destination by default', () => {
    expect(isDestinationEnabled(undefined, 'Webhooks')).toBe(true)
    expect(isDestinationEnabled({}, 'Webhooks')).toBe(true)
  })

  it('disables everything with All: false, unless the destination is named true', () => {
    expect(isDestinationEnabled({ All: false }, 'Webhooks')).toBe(false)
    expect(isDestinationEnabled({ All: false, Webhooks: true }, 'Webhooks')).toBe(true)
    expect(isDestinationEnabled({ All: false, Webhooks: { secret: 'x' } }, 'Webhooks')).toBe(true)
  })

  it('skips a destination named false, whatever All says', () => {
    expect(isDestinationEnabled({ Webhooks: false }, 'Webhooks')).toBe(false)
    expect(isDestinationEnabled({ All: true, Webhooks: false }, 'Webhooks')).toBe(false)
  })

  it('treats keys as case sensitive', () => {
    expect(isDestinationEnabled({ All: false, webhooks: true }, 'Webhooks')).toBe(false)
    expect(isDestinationEnabled({ webhooks: false }, 'Webhooks')).toBe(true)
  })

  it("reads analytics-go v3's lower-case all as All, when there is no All", () => {
    expect(isDestinationEnabled({ all: false }, 'Webhooks')).toBe(false)
    expect(isDestinationEnabled({ all: false, Webhooks: true }, 'Webhooks')).toBe(true)
    expect(isDestinationEnabled({ all: true }, 'Webhooks')).toBe(true)
    expect(isDestinationEnabled({ All: true, all: false }, 'Webhooks')).toBe(true)
    expect(isDestinationEnabled({ all: false }, 'all')).toBe(false)
  })

  it("lets a message's All or all replace the defaults' All and all when merging", () => {
    expect(mergeIntegrations({ all: false, Mixpanel: true }, { All: true })).toEqual({ Mixpanel: true, All: true })
    expect(mergeIntegrations({ All: false }, { all: true })).toEqual({ all: true })
    expect(isDestinationEnabled(mergeIntegrations({ All: false }, { all: true }), 'Webhooks')).toBe(true)
    expect(mergeIntegrations({ all: false }, { Webhooks: true })).toEqual({ all: false, Webhooks: true })
  })

  it('does not read inherited keys as flags', () => {
    expect(isDestinationEnabled({ All: false }, 'toString')).toBe(false)
  })
})

describe('mergeIntegrations', () => {
  it('puts the call’s own flags over the defaults, key by key', () => {
    expect(mergeIntegrations({ All: false, Webhooks: true }, { Webhooks: false, Mixpanel: true })).toEqual({
      All: false,
      Webhooks: false,
      Mixpanel: true,
    })
  })

  it('keeps whichever side exists, and nothing when neither does', () => {
    expect(mergeIntegrations(undefined, undefined)).toBeUndefined()
    expect(mergeIntegrations({ All: false }, undefined)).toEqual({ All: false })
    expect(mergeIntegrations(undefined, { Webhooks: false })).toEqual({ Webhooks: false })
  })

  it('never mutates either argument', () => {
    const defaults = { All: false }
    const own = { Webhooks: true }
    mergeIntegrations(defaults, own)
    expect(defaults).toEqual({ All: false })
    expect(own).toEqual({ Webhooks: true })
  })
})
