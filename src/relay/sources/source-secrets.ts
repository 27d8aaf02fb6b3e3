import { isPlainObject } from '../../shared/validate'
import type { SourceDestinations } from '../config/options'

/** How a secret is answered, and what a client sends back to keep the one stored. */
export const MASKED = '***'

/**
 * A copy of `destinations` with `change` applied to each secret in it: the Webhooks shared secret,
 * the Standard Webhooks secrets and every static header value of every webhook (they often carry
 * the receiver's own API key), and the password in the Warehouse's URL. `path` names where the secret is, stable across edits that move
 * webhooks (by URL and header name, not by index), so that a `"***"` sent back finds its value.
 */
export function mapSecrets(
  destinations: SourceDestinations,
  change: (value: string, path: string) => string,
): SourceDestinations {
  return mapWarehousePassword(mapWebhookSecrets(destinations, change), change)
}

/** The password in the Warehouse destination's `url` (postgres://loader:PASSWORD@host/db). */
function mapWarehousePassword(
  destinations: SourceDestinations,
  change: (value: string, path: string) => string,
): SourceDestinations {
  const warehouse = destinations['Warehouse']
  if (!isPlainObject(warehouse) || typeof warehouse['url'] !== 'string') return destinations
  let url: URL
  try {
    url = new URL(warehouse['url'])
  } catch {
    return destinations
  }
  if (url.password === '') return destinations
  url.password = encodeURIComponent(change(decodeURIComponent(url.password), 'Warehouse.url.password'))
  return { ...destinations, Warehouse: { ...warehouse, url: url.toString() } }
}

function mapWebhookSecrets(
  destinations: SourceDestinations,
  change: (value: string, path: string) => string,
): SourceDestinations {
  const webhooks = destinations.Webhooks
  if (webhooks === undefined) return structuredClone(destinations)
  const copy = structuredClone(webhooks) as unknown as Record<string, unknown>
  if (typeof copy['sharedSecret'] === 'string') copy['sharedSecret'] = change(copy['sharedSecret'], 'sharedSecret')
  const standard = copy['standardWebhooks']
  if (isPlainObject(standard) && Array.isArray(standard['secrets'])) {
    standard['secrets'] = standard['secrets'].map((secret: unknown, index) =>
      typeof secret === 'string' ? change(secret, `standardWebhooks.secrets[${index}]`) : secret,
    )
  }
  const entries = Array.isArray(copy['webhooks']) ? (copy['webhooks'] as unknown[]) : []
  for (const entry of entries) {
    if (!isPlainObject(entry) || !isPlainObject(entry['headers'])) continue
    const headers = entry['headers']
    for (const [name, value] of Object.entries(headers)) {
      if (typeof value === 'string')
        headers[name] = change(value, `webhooks[${String(entry['url'])}].headers.${name.toLowerCase()}`)
    }
  }
  return { ...destinations, Webhooks: copy as unknown as NonNullable<SourceDestinations['Webhooks']> }
}

/** Whether `destinations` holds any secret (one that needs `secretsKey` to be stored). */
export function hasSecrets(destinations: SourceDestinations): boolean {
  let found = false
  mapSecrets(destinations, (value) => {
    found = true
    return value
  })
  return found
}

/** `destinations` with every secret shown as {@link MASKED}. */
export function maskSecrets(destinations: SourceDestinations): SourceDestinations {
  return mapSecrets(destinations, () => MASKED)
}

/**
 * `given` with each {@link MASKED} secret replaced by the secret stored at the same place in
 * `stored`; the paths of those that have none there (a `"***"` for a secret never set).
 */
export function keepMaskedSecrets(
  given: SourceDestinations,
  stored: SourceDestinations | undefined,
): { destinations: SourceDestinations; unmatched: string[] } {
  const known = new Map<string, string>()
  if (stored !== undefined) {
    mapSecrets(stored, (value, path) => {
      known.set(path, value)
      return value
    })
  }
  const unmatched: string[] = []
  const destinations = mapSecrets(given, (value, path) => {
    if (value !== MASKED) return value
    const kept = known.get(path)
    if (kept === undefined) unmatched.push(path)
    return kept ?? value
  })
  return { destinations, unmatched }
}
