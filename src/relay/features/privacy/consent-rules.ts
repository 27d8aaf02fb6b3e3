import type { SourceRegistry } from '../../sources/source-registry'
import type { ConsentSetting } from './consent'
import type { DestinationConsent } from '../../config/consent-setting'

/** Each source's destinations that have a consent rule, by source name: only sources with one. */
export type ConsentRules = ReadonlyMap<string, ReadonlyMap<string, ConsentSetting>>

/** The consent rules of the registry's sources now (an API source's too). */
export function consentRulesOf(registry: SourceRegistry): ConsentRules {
  const rules = new Map<string, Map<string, ConsentSetting>>()
  for (const source of registry.all()) {
    const destinations = (source.settings.destinations ?? {}) as Record<string, DestinationConsent | undefined>
    for (const [name, settings] of Object.entries(destinations)) {
      const consent = settings?.consent
      if (consent === undefined) continue
      const ofSource = rules.get(source.routed.name) ?? new Map<string, ConsentSetting>()
      ofSource.set(name, consent)
      rules.set(source.routed.name, ofSource)
    }
  }
  return rules
}
