import type { DeliveryStep } from '../delivery/delivery-step'
import { chainSteps } from '../delivery/delivery-step'
import type { RelayEvents } from '../events/channel'
import type { IngestTap } from '../events/tap'
import type { Route } from '../http/route'
import type { ReloadPart } from '../sources/reload'
import type { CheckFindings, IngestCheck } from '../ingest/ingest-check'
import type { NewViolation } from '../store/violations'
import type { Feature } from './feature'

/**
 * The features' ingest checks as one, in the features' order: each sees the message as the ones
 * before it left it; the first to refuse or block ends it; what they found is kept together (the
 * violations, and the destinations each withheld it from: a withheld message goes on to the next).
 * `undefined` when no feature checks messages (nothing is asked, at no cost).
 */
export function ingestCheckOf(features: readonly Feature[]): IngestCheck | undefined {
  const checks = features.flatMap((f) => (f.ingestCheck === undefined ? [] : [f.ingestCheck]))
  if (checks.length <= 1) return checks[0]
  const check: IngestCheck = (message, source) => {
    let current = message
    let changed = false
    const violations: NewViolation[] = []
    const withheld = new Map<string, string>()
    for (const each of checks) {
      const verdict = each(current, source)
      if (verdict === undefined) continue
      if (typeof verdict === 'string') return verdict
      violations.push(...verdict.violations)
      for (const [destination, reason] of verdict.withheld ?? []) {
        if (!withheld.has(destination)) withheld.set(destination, reason)
      }
      if (verdict.message !== undefined) {
        current = verdict.message
        changed = true
      }
      if (verdict.blocked !== undefined) {
        return findings(violations, withheld, changed ? current : undefined, verdict.blocked)
      }
    }
    const found = changed || violations.length > 0 || withheld.size > 0
    return found ? findings(violations, withheld, changed ? current : undefined) : undefined
  }
  return check
}

function findings(
  violations: readonly NewViolation[],
  withheld: ReadonlyMap<string, string>,
  message: Readonly<Record<string, unknown>> | undefined,
  blocked?: string,
): CheckFindings {
  return {
    violations,
    ...(message === undefined ? {} : { message: message as Record<string, unknown> }),
    ...(blocked === undefined ? {} : { blocked }),
    ...(withheld.size === 0 ? {} : { withheld }),
  }
}

/** The features' delivery steps as one, in the features' order. */
export function deliveryStepOf(features: readonly Feature[]): DeliveryStep | undefined {
  return features.reduce<DeliveryStep | undefined>((step, f) => chainSteps(step, f.deliveryStep), undefined)
}

/**
 * The features' ingest taps as one, told in the features' order. It listens while any of them
 * does (read once per request, as ingest reads a tap); `undefined` when no feature taps ingest.
 */
export function ingestTapOf(features: readonly Feature[]): IngestTap | undefined {
  const taps = features.flatMap((f) => (f.ingestTap === undefined ? [] : [f.ingestTap]))
  if (taps.length <= 1) return taps[0]
  return {
    get listening() {
      return taps.some((tap) => tap.listening)
    },
    accepted: (...args) => {
      for (const tap of taps) if (tap.listening) tap.accepted(...args)
    },
    refused: (...args) => {
      for (const tap of taps) if (tap.listening) tap.refused(...args)
    },
  }
}

/** The features' routes, each one's own before its page section's, in the features' order. */
export function routesOf(features: readonly Feature[]): Route[] {
  return features.flatMap((f) => [...(f.routes ?? []), ...(f.page?.routes ?? [])])
}

/** The features' parts of a reload, in the features' order. */
export function reloadPartsOf(features: readonly Feature[]): ReloadPart[] {
  return features.flatMap((f) => (f.reload === undefined ? [] : [f.reload]))
}

/** Subscribes every feature's event readers, in order; the function returned unsubscribes them. */
export function subscribeReaders(features: readonly Feature[], events: RelayEvents): () => void {
  const unsubscribes = features.flatMap((f) => (f.readers ?? []).map((reader) => events.subscribe(reader)))
  return () => {
    for (const unsubscribe of unsubscribes) unsubscribe()
  }
}
