import { type ConfigProblems, flag, listOf, objectOf, pathOf, type Rule, type RulesOf, text } from '../kit/rules'

/**
 * A destination's consent rule (docs/privacy.md, "Consent"): `destinations.<Name>.consent`.
 * The categories are the names a consent manager sends in `context.consent.categoryPreferences`.
 */
export interface ConsentSetting {
  /** The categories a message must have consent for, every one of them (case sensitive). */
  categories: readonly string[]
  /** A message without `categoryPreferences` is withheld too. @default false */
  required?: boolean
}

/** The key of a destination's settings that holds its consent rule: the relay's, not the destination's. */
export const CONSENT_KEY = 'consent'

/** A destination's consent rule among its settings (docs/privacy.md, "Consent"). */
export interface DestinationConsent {
  consent?: ConsentSetting
}

const CONSENT_RULES: RulesOf<ConsentSetting> = {
  categories: listOf(text, 'category names'),
  required: flag,
}

const consentRule: Rule<Partial<ConsentSetting>> = objectOf(CONSENT_RULES, 'a consent setting')

/**
 * Checks the consent rule of destination settings at `field` (`sources[0].destinations.Webhooks`)
 * and returns it copied; records each problem with its path.
 */
export function checkDestinationConsent(
  value: Readonly<Record<string, unknown>>,
  field: string,
  problems: ConfigProblems,
): DestinationConsent {
  const raw = value[CONSENT_KEY]
  if (raw === undefined) return {}
  const path = pathOf(field, CONSENT_KEY)
  const found = problems.list.length
  const checked = consentRule(raw, path, problems)
  if (checked === undefined || problems.list.length > found) return {}
  if (checked.categories === undefined || checked.categories.length === 0) {
    // An empty list would hold nothing back: a rule that says nothing is a mistake.
    problems.add(pathOf(path, 'categories'), 'must list at least one category')
    return {}
  }
  const consent: ConsentSetting = { categories: [...checked.categories] }
  if (checked.required !== undefined) consent.required = checked.required
  return { consent }
}

/** `settings` without the consent rule: what the destination itself is built from. */
export function withoutConsent<T extends object>(settings: T): Omit<T, keyof DestinationConsent> {
  const rest = { ...settings } as Record<string, unknown>
  delete rest[CONSENT_KEY]
  return rest as Omit<T, keyof DestinationConsent>
}
