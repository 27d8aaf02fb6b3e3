import { redactUrl } from '../../shared/redact-url'
import { log } from '../log'
import type { DeliveryRoute } from '../store/circuits'
import type { Plan } from './breaker'
import type { Sending } from './worker-options'
import type { DueDelivery } from '../store/store'
import type { Lane } from './lane'

/** What picking a probe's delivery needs from the worker. */
export interface ProbeCandidateHost {
  routes: ReadonlyMap<string, readonly DeliveryRoute[]>
  lanes: ReadonlyMap<string, Lane>
  /** Claims, for the probe of `url`, a delivery due to go there (parked ones included), if any. */
  claimProbe(url: string): Promise<DueDelivery | undefined>
  /** Leases of deliveries claimed: `hold` to keep, `release` to give back. */
  leases: { hold(ids: readonly number[]): void; release(ids: readonly number[]): Promise<void> }
  stopping(): boolean
  /**
   * The delivery after its step (its function), ready to send; `undefined` when the step ended it
   * (filtered, failed: its outcome recorded) or the worker is stopping.
   */
  stepped(lane: Lane, delivery: DueDelivery): Promise<DueDelivery | undefined>
}

/**
 * The delivery to carry the probe of `url`, its step run first (holding the probe): one the step
 * ends makes no request, so it is no probe, and the next waiting delivery is tried at once, rather
 * than the probe given back to wait for the next probe interval (a half-open URL is not held
 * waiting because its probe was filtered). `undefined` when none waits that the step lets through.
 */
export async function probeDelivery(
  url: string,
  host: ProbeCandidateHost,
): Promise<{ lane: Lane; delivery: DueDelivery } | undefined> {
  for (;;) {
    const found = await probeCandidate(url, host)
    if (found === undefined) return undefined
    const ready = await host.stepped(found.lane, found.delivery)
    if (ready !== undefined) return { lane: found.lane, delivery: ready }
  }
}

/**
 * A delivery to carry the probe of `url`, with its lane: one already claimed by this worker if
 * any (taken out of its lane's buffer), else one claimed from the store for it; `undefined` when
 * none waits (or the worker is stopping).
 */
async function probeCandidate(
  url: string,
  host: ProbeCandidateHost,
): Promise<{ lane: Lane; delivery: DueDelivery } | undefined> {
  if (host.stopping()) return undefined
  for (const route of host.routes.get(url) ?? []) {
    const lane = host.lanes.get(route.source)
    const claimed = lane?.take(route.destination)
    if (lane !== undefined && claimed !== undefined) return { lane, delivery: claimed }
  }
  const delivery = await host.claimProbe(url)
  if (delivery === undefined) return undefined
  const lane = host.lanes.get(delivery.source)
  if (lane === undefined || host.stopping()) {
    await host.leases.release([delivery.id])
    return undefined
  }
  host.leases.hold([delivery.id])
  return { lane, delivery }
}

/** What the probe of `url` sends, as the breaker planned it for `found`'s delivery; logged. */
export function probeSending(plan: Plan, url: string, found: { lane: Lane; delivery: DueDelivery }): Sending {
  // The probe's URL is always in the plan, so it is always a send.
  const { urls, skipped } = plan as Extract<Plan, { kind: 'send' }>
  const { lane, delivery } = found
  log.info(`probing ${redactUrl(url)} with delivery ${delivery.id} of source ${lane.source}`, {
    event: 'probe',
    url,
    source: lane.source,
    deliveryId: delivery.id,
  })
  return { urls, skipped, probe: url }
}
