import { DESTINATIONS } from '../destinations/index'
import { withoutFunction } from './function-settings'
import type { ResolvedRelayOptions } from './options'

/**
 * Every secret in a relay's configuration, for the log to clean its lines of: the admin and
 * metrics tokens, write keys, each destination's secrets (as its module names them: the webhook
 * signing secrets and static header values) and the database URL's password.
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
    for (const module of DESTINATIONS) {
      const settings = source.destinations?.[module.name]
      if (settings !== undefined) found.push(...module.secrets(withoutFunction(settings)))
    }
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
