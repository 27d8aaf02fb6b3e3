import type { ResolvedRelayOptions } from './options'

/**
 * Every secret in a relay's configuration, for the log to clean its lines of: the admin and
 * metrics tokens, write keys, webhook signing secrets, static webhook header values (they often
 * carry an API key) and the database URL's password.
 */
export function secretsOf(options: ResolvedRelayOptions): string[] {
  const found: (string | undefined)[] = [
    options.adminToken,
    options.metricsToken,
    options.readToken,
    ...(options.secretsKey?.split(',') ?? []),
    databasePassword(options.database),
    options.alerts?.url,
  ]
  for (const source of options.sources) {
    found.push(source.writeKey)
    const webhooks = source.destinations?.Webhooks
    if (webhooks === undefined) continue
    found.push(webhooks.sharedSecret)
    if (typeof webhooks.standardWebhooks === 'object') found.push(...webhooks.standardWebhooks.secrets)
    for (const entry of webhooks.webhooks ?? []) found.push(...Object.values(entry.headers ?? {}))
  }
  return found.filter((secret): secret is string => typeof secret === 'string' && secret.length > 0)
}

function databasePassword(database: string): string | undefined {
  try {
    const password = new URL(database).password
    return password === '' ? undefined : decodeURIComponent(password)
  } catch {
    return undefined // a file path
  }
}
