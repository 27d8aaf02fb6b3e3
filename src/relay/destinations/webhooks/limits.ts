import { isPlainObject } from '../../../shared/validate'
import { ConfigProblems } from '../../kit/rules'
import { RelayConfigError } from '../../errors'
import type { TargetLimits } from '../destination'
import { checkTargetLimits, withoutLimits } from '../limit-settings'

/**
 * Each webhook's limits (`webhooks: [{ url, ratePerSecond?, maxInFlight? }]`,
 * docs/delivery-controls.md) taken out of the settings: the relay holds them, the destination
 * never sees them. `settings` is what is left, for the destination to check and build from.
 *
 * @throws {RelayConfigError} listing every problem of the limits, each with its path under `path`.
 */
export function splitWebhookLimits(
  raw: unknown,
  path: string,
): { settings: unknown; limits: ReadonlyMap<string, TargetLimits> } {
  const limits = new Map<string, TargetLimits>()
  if (!isPlainObject(raw) || !Array.isArray(raw['webhooks'])) return { settings: raw, limits }
  const problems = new ConfigProblems()
  const webhooks = raw['webhooks'].map((entry: unknown, index) => {
    if (!isPlainObject(entry)) return entry
    const found = checkTargetLimits(entry, `${path}.webhooks[${index}]`, problems)
    const url = entry['url']
    if (found !== undefined && typeof url === 'string') {
      // The same URL listed twice keeps the stricter of each limit.
      limits.set(url, stricter(limits.get(url), found))
    }
    return withoutLimits(entry)
  })
  const [first] = problems.list
  if (first !== undefined) throw new RelayConfigError(first.field, first.message, { problems: problems.list })
  return { settings: { ...raw, webhooks }, limits }
}

/** The stricter of two targets' limits, each limit on its own. */
export function stricter(a: TargetLimits | undefined, b: TargetLimits): TargetLimits {
  if (a === undefined) return b
  const rate = Math.min(a.ratePerSecond ?? Number.POSITIVE_INFINITY, b.ratePerSecond ?? Number.POSITIVE_INFINITY)
  const inFlight = Math.min(a.maxInFlight ?? Number.POSITIVE_INFINITY, b.maxInFlight ?? Number.POSITIVE_INFINITY)
  return Object.freeze({
    ...(Number.isFinite(rate) ? { ratePerSecond: rate } : {}),
    ...(Number.isFinite(inFlight) ? { maxInFlight: inFlight } : {}),
  })
}
