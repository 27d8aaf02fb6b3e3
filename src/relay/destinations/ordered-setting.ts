import { isPlainObject } from '../../shared/validate'
import { type ConfigProblems, flag, pathOf } from '../kit/rules'

/**
 * The key of a destination's settings that asks for ordered delivery per user
 * (`destinations.Webhooks.ordered`, docs/delivery-controls.md, "Ordering"): the relay's, never
 * the destination's.
 */
export const ORDERED_KEY = 'ordered'

/** What the setting is when absent: deliveries go in parallel, each user's too. */
export const ORDERED_DEFAULT = false

/**
 * Checks the ordering setting among destination settings at `field`
 * (`sources[0].destinations.Webhooks`), recording a problem with its path
 * (`…Webhooks.ordered: must be true or false, got a string`).
 */
export function checkOrdered(raw: unknown, field: string, problems: ConfigProblems): boolean {
  if (!isPlainObject(raw) || raw[ORDERED_KEY] === undefined) return ORDERED_DEFAULT
  return flag(raw[ORDERED_KEY], pathOf(field, ORDERED_KEY), problems) ?? ORDERED_DEFAULT
}

/** `settings` without the ordering setting: what the destination itself is built from. */
export function withoutOrdered(raw: unknown): unknown {
  if (!isPlainObject(raw) || !(ORDERED_KEY in raw)) return raw
  const rest = { ...raw }
  delete rest[ORDERED_KEY]
  return rest
}

/** Whether validated destination settings ask for ordered delivery. */
export function isOrdered(settings: unknown): boolean {
  return isPlainObject(settings) && settings[ORDERED_KEY] === true
}
