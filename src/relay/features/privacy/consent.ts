import type { ConsentSetting } from '../../config/consent-setting'
import { isPlainObject } from '../../../shared/validate'

export type { ConsentSetting }

/** The filtered reason of a message withheld from a destination for want of consent. */
export const CONSENT_REASON = 'consent'

/**
 * Whether `message` may go to a destination with `setting`: every listed category is `true` in
 * its `context.consent.categoryPreferences` (a category missing from them is not given). A
 * message without preferences goes unless the setting is `required`; preferences that are not an
 * object are not consent to anything.
 */
export function consentGiven(setting: ConsentSetting, message: Readonly<Record<string, unknown>>): boolean {
  const preferences = preferencesOf(message)
  if (preferences === undefined) return setting.required !== true
  if (!isPlainObject(preferences)) return false
  return setting.categories.every((category) => Object.hasOwn(preferences, category) && preferences[category] === true)
}

// `context.consent.categoryPreferences` as sent; `undefined` when the message carries none.
function preferencesOf(message: Readonly<Record<string, unknown>>): unknown {
  const context = message['context']
  if (!isPlainObject(context)) return undefined
  const consent = context['consent']
  if (!isPlainObject(consent)) return undefined
  const preferences = consent['categoryPreferences']
  return preferences === null ? undefined : preferences
}
