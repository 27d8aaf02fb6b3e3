import { lookup } from 'node:dns/promises'
import { isIP } from 'node:net'
import { classifyAddress, type Resolve } from '../net/address'
import type { ResolvedRelayOptions } from './options'
import { log } from '../log'
import { MIN_ADMIN_TOKEN_LENGTH } from './defaults'

// A name that does not resolve this fast gets no warning: the check must not hold up a start.
const LOOKUP_LIMIT_MS = 1000

const resolveAll: Resolve = (host) => lookup(host, { all: true, verbatim: true })

/**
 * What is valid but likely not what the operator meant, as one sentence each (never a secret):
 * a source with no destination, no admin token, an admin token short enough to guess. Printed at
 * start and by `tracklet relay --check`; never fatal.
 */
export function configWarnings(options: ResolvedRelayOptions): string[] {
  const warnings: string[] = []
  options.sources.forEach((source, index) => {
    if (Object.keys(source.destinations ?? {}).length === 0) {
      warnings.push(
        `sources[${index}] (${source.name}) has no destination: its messages are accepted and never delivered`,
      )
    }
  })
  if (options.adminToken === undefined) {
    warnings.push('adminToken is not set: the admin API and the operator page are off')
  } else if (options.adminToken.length < MIN_ADMIN_TOKEN_LENGTH) {
    warnings.push(`adminToken is shorter than ${MIN_ADMIN_TOKEN_LENGTH} characters: it can be guessed`)
  }
  return warnings
}

/**
 * One warning per webhook URL whose host is (or resolves to) an address the SSRF guard refuses
 * while `allowPrivateNetworks` is false: every delivery to it would fail. The rule is the guard's
 * own ({@link classifyAddress}); a host that cannot be resolved now gets no warning (the guard
 * decides at each connection).
 */
export async function privateNetworkWarnings(
  options: ResolvedRelayOptions,
  resolve: Resolve = resolveAll,
): Promise<string[]> {
  if (options.allowPrivateNetworks) return []
  const checks = options.sources.flatMap((source, index) =>
    (source.destinations?.Webhooks?.webhooks ?? []).map(async (entry, position) => {
      const host = new URL(entry.url).hostname.replace(/^\[(.*)\]$/, '$1')
      const addresses = isIP(host) !== 0 ? [host] : await addressesOf(host, resolve)
      const blocked = addresses.map((address) => [address, classifyAddress(address)] as const).find(([, kind]) => kind)
      if (blocked === undefined) return undefined
      const [address, kind] = blocked
      const where = address === host ? host : `${host} (${address})`
      return `sources[${index}].destinations.Webhooks.webhooks[${position}].url: ${where} is a ${kind} address and allowPrivateNetworks is false: every delivery to it will fail`
    }),
  )
  return (await Promise.all(checks)).filter((warning) => warning !== undefined)
}

async function addressesOf(host: string, resolve: Resolve): Promise<string[]> {
  let timer: NodeJS.Timeout | undefined
  const giveUp = new Promise<[]>((done) => {
    timer = setTimeout(() => done([]), LOOKUP_LIMIT_MS).unref()
  })
  try {
    const found = resolve(host).then(
      (answers) => answers.map((answer) => answer.address),
      () => [],
    )
    return await Promise.race([found, giveUp])
  } finally {
    clearTimeout(timer)
  }
}

/**
 * Logs every start-up warning at `warn` (event `config-warning`): the config's at once, the
 * private-network ones when the host names are looked up (not awaited: a lookup must not hold up
 * the start). Resolves once all are logged.
 */
export function logStartupWarnings(options: ResolvedRelayOptions): Promise<void> {
  const warn = (warning: string) => log.warn(warning, { event: 'config-warning' })
  for (const warning of configWarnings(options)) warn(warning)
  return privateNetworkWarnings(options).then((warnings) => warnings.forEach(warn))
}
