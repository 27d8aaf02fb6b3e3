import type { DestinationSender, TargetLimits } from '../../destinations/destination'
import { stricter } from '../../destinations/webhooks/limits'

/**
 * Each limited target's limits across every source's destinations: a URL that several sources
 * send to keeps the stricter of each limit (the receiver is one).
 */
export function limitsByUrl(
  destinations: ReadonlyMap<string, ReadonlyMap<string, DestinationSender>>,
): Map<string, TargetLimits> {
  const byUrl = new Map<string, TargetLimits>()
  for (const named of destinations.values()) {
    for (const sender of named.values()) {
      for (const [url, limits] of sender.limits ?? []) byUrl.set(url, stricter(byUrl.get(url), limits))
    }
  }
  return byUrl
}
