import type { Integrations } from './message'

/**
 * Merges client-level default `integrations` under a call's own: the call's flags win, key by
 * key. Returns `undefined` when neither has any, so messages without flags carry none.
 */
export function mergeIntegrations(
  defaults: Integrations | undefined,
  own: Integrations | undefined,
): Integrations | undefined {
  if (defaults === undefined) return own
  if (own === undefined) return defaults
  return { ...defaults, ...own }
}

/**
 * Whether a message with these `integrations` flags goes to the destination called `name`.
 *
 * The platform's rule: by default every destination is enabled; `All: false` disables every
 * destination that is not itself named `true` (or given an options object); a destination named
 * `false` is skipped whatever `All` says. Keys are case sensitive (`Webhooks`, not `webhooks`).
 */
export function isDestinationEnabled(integrations: Integrations | undefined, name: string): boolean {
  if (integrations === undefined) return true
  if (Object.hasOwn(integrations, name)) return integrations[name] !== false
  return integrations['All'] !== false
}
