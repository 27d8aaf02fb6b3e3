import { describe, expect, it } from 'vitest'
import type { RoutedSource } from '../../../src/relay/config/sources'
import { validateRelayOptions } from '../../../src/relay/config/validate'
import { RelayConfigError } from '../../../src/relay/errors'
import { consentGiven } from '../../../src/relay/features/privacy/consent'
import { privacyCheck } from '../../../src/relay/features/privacy/privacy-check'
import { SuppressionSet } from '../../../src/relay/features/privacy/suppression-set'
import { GroupCommit } from '../../../src/relay/ingest/group-commit'
import { ingest } from '../../../src/relay/ingest/ingest'
import type { NewDelivery } from '../../../src/relay/store/store'

// Consent (docs/privacy.md, "Consent"): each rule of the platform's consent documentation.

const withPreferences = (preferences: unknown): Record<string, unknown> => ({
  type: 'track',
  userId: 'u1',
  event: 'Viewed',
  context: { consent: { categoryPreferences: preferences } },
})

describe('a destination consent rule', () => {
  const ads = { categories: ['Advertising', 'Analytics'] }

  it('lets a message through only when every listed category is true', () => {
    expect(consentGiven(ads, withPreferences({ Advertising: true, Analytics: true }))).toBe(true)
    expect(consentGiven(ads, withPreferences({ Advertising: true, Analytics: false }))).toBe(false)
    expect(consentGiven(ads, withPreferences({ Advertising: false, Analytics: false }))).toBe(false)
  })

  it('counts a listed category missing from the preferences as not given', () => {
    expect(consentGiven(ads, withPreferences({ Advertising: true }))).toBe(false)
    expect(consentGiven(ads, withPreferences({}))).toBe(false)
  })

  it('takes only true as consent: a truthy string or 1 is not', () => {
    expect(consentGiven(ads, withPreferences({ Advertising: 'true', Analytics: 1 }))).toBe(false)
  })

  it('ignores categories the destination does not list', () => {
    expect(consentGiven(ads, withPreferences({ Advertising: true, Analytics: true, Functional: false }))).toBe(true)
  })

  it('lets a message without categoryPreferences through, unless the rule is required', () => {
    const bare = { type: 'track', userId: 'u1', event: 'Viewed' }
    expect(consentGiven(ads, bare)).toBe(true)
    expect(consentGiven(ads, { ...bare, context: { consent: {} } })).toBe(true)
    expect(consentGiven({ ...ads, required: true }, bare)).toBe(false)
    expect(consentGiven({ ...ads, required: true }, { ...bare, context: { consent: {} } })).toBe(false)
    expect(consentGiven({ ...ads, required: true }, withPreferences({ Advertising: true, Analytics: true }))).toBe(true)
  })

  it('takes preferences that are not an object as consent to nothing', () => {
    expect(consentGiven(ads, withPreferences(['Advertising', 'Analytics']))).toBe(false)
    expect(consentGiven(ads, withPreferences('all'))).toBe(false)
  })

  it('matches category names case sensitively', () => {
    expect(consentGiven(ads, withPreferences({ advertising: true, analytics: true }))).toBe(false)
  })
})

describe('the consent setting in a config', () => {
  const optionsWith = (consent: unknown) => ({
    sources: [
      {
        name: 'web',
        writeKey: 'k',
        destinations: { Webhooks: { webhooks: [{ url: 'https://example.com/a' }], consent } },
      },
    ],
  })

  it('is kept as given, beside the destination settings', () => {
    const resolved = validateRelayOptions(optionsWith({ categories: ['Advertising'], required: true }))
    expect(resolved.sources[0]!.destinations!.Webhooks!.consent).toEqual({
      categories: ['Advertising'],
      required: true,
    })
  })

  it('refuses every mistake, each with its path', () => {
    const problems = (consent: unknown) => {
      try {
        validateRelayOptions(optionsWith(consent))
      } catch (error) {
        expect(error).toBeInstanceOf(RelayConfigError)
        return (error as RelayConfigError).problems.map((p) => `${p.field}: ${p.message}`)
      }
      return []
    }
    const at = 'sources[0].destinations.Webhooks.consent'
    expect(problems({ categories: [] })).toEqual([`${at}.categories: must list at least one category`])
    expect(problems({ categories: 'Advertising' })[0]).toMatch(`${at}.categories: must be an array`)
    expect(problems({ categories: [''] })[0]).toMatch(`${at}.categories[0]: must be a non-empty string`)
    expect(problems({ categories: ['A'], required: 'yes' })[0]).toMatch(`${at}.required: must be true or false`)
    expect(problems({ categories: ['A'], requried: true })[0]).toMatch(`${at}.requried: is not a consent setting`)
    expect(problems(['A'])[0]).toMatch(`${at}: must be an object`)
  })
})

describe('consent at ingest, with two destinations on a source', () => {
  const source: RoutedSource = { name: 'web', destinations: ['Webhooks', 'Archive'] }
  const consent = new Map([['web', new Map([['Webhooks', { categories: ['Advertising'] }]])]])
  const check = privacyCheck({ suppressed: () => new SuppressionSet(), consentOf: (name) => consent.get(name) })

  async function routed(message: Record<string, unknown>) {
    const written: NewDelivery[] = []
    const commits = new GroupCommit({
      enqueue: async (deliveries) => {
        written.push(...deliveries)
        return deliveries.length
      },
    })
    const withheld: [string, string][] = []
    const tap = {
      listening: true,
      accepted: (_s: string, _m: unknown, _b: unknown, w?: ReadonlyMap<string, string>) => {
        withheld.push(...(w ?? []))
      },
      refused: () => {},
    }
    const outcome = await ingest(commits, source, [message], { tap }, check)
    return { destinations: written.map((d) => d.destination), withheld, outcome }
  }

  it('withholds the message from the destination without consent only, as filtered with reason consent', async () => {
    const { destinations, withheld, outcome } = await routed(withPreferences({ Advertising: false }))
    expect(destinations).toEqual(['Archive'])
    expect(withheld).toEqual([['Webhooks', 'consent']])
    // Accepted, and not a filtered message: one of its destinations still gets it.
    expect(outcome).toMatchObject({ accepted: 1, filtered: 0 })
  })

  it('sends it to both with consent', async () => {
    const { destinations, withheld } = await routed(withPreferences({ Advertising: true }))
    expect(destinations).toEqual(['Webhooks', 'Archive'])
    expect(withheld).toEqual([])
  })

  it('lets consent win over integrations: a destination named true still needs its categories', async () => {
    const message = { ...withPreferences({ Advertising: false }), integrations: { All: false, Webhooks: true } }
    const { destinations, withheld } = await routed(message)
    expect(destinations).toEqual([])
    expect(withheld).toEqual([['Webhooks', 'consent']])
  })

  it('says nothing of a destination its integrations turned off anyway', async () => {
    const message = { ...withPreferences({ Advertising: false }), integrations: { Webhooks: false } }
    const { destinations, withheld } = await routed(message)
    expect(destinations).toEqual(['Archive'])
    expect(withheld).toEqual([])
  })
})
