import type { Integrations } from './message'

/**
 * The flag for every destination not named: `All`, or analytics-go v3's lower-case `all` (what its
 * `EnableAll()` and `DisableAll()` write) when there is no `All`. The only key read without regard
 * to case; destination names are case sensitive.
 */
function allFlag(integrations: Integrations): Integrations[string] | undefined {
  return Object.hasOwn(integrations, 'All') ? integrations['All'] : integrations['all']
}

function hasAllFlag(integrations: Integrations): boolean {
  return Object.hasOwn(integrations, 'All') || Object.hasOwn(integrations, 'all')
}

/**
 * Merges default `integrations` (a client's, or a batch's at the relay) under a message's own:
 * the message's flags win, key by key, and its `All` (or `all`) replaces the defaults' `All` and
 * `all`. Returns `undefined` when neither has any, so messages without flags carry none.
 */
export function mergeIntegrations(
  defaults: Integrations | undefined,
  own: Integrations | undefined,
): Integrations | undefined {
  if (defaults === undefined) return own
  if (own === undefined) return defaults
  if (!hasAllFlag(own) || !hasAllFlag(defaults)) return { ...defaults, ...own }
  const { All: _All, all: _all, ...named } = defaults
  return { ...named, ...own }
}

/**
 * Whether a message with these `integrations` flags goes to the destination called `name`.
 *
 * The platform's rule: by default every destination is enabled; `All: false` (or analytics-go
 * v3's `all: false`) disables every destination that is not itself named `true` (or given an
 * options object); a destination named `false` is skipped whatever `All` says. Keys are case
 * sensitive (`Webhooks`, not `webhooks`), but for `all`.
 */
export function isDestinationEnabled(integrations: Integrations | undefined, name: string): boolean {
  if (integrations === undefined) return true
  if (Object.hasOwn(integrations, name)) return integrations[name] !== false
  return allFlag(integrations) !== false
}
