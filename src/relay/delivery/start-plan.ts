import type { DueDelivery } from '../store/store'
import type { Breaker, Plan } from './breaker'
import type { RouteStep } from './delivery-step'
import type { WorkerLimits } from './limits/worker-limits'
import type { PreparedSteps } from './prepared-steps'

/** What planning a delivery's start needs from the worker. */
export interface StartPlanHost {
  /** The circuits, when the worker has a breaker (a replay lane's worker has none). */
  breaker: Breaker | undefined
  limits: WorkerLimits
  steps: PreparedSteps
  now: () => number
}

/**
 * How `delivery` starts now, to `urls` (every URL of its destination): the breaker's plan, and the
 * step it runs first when it may go. Room on the limited URLs is taken last, right before the send
 * (a step runs first, unlimited): a delivery without room there waits, and so are counted the
 * deliveries behind it (its destination's next ones in `buffer`, its lane's).
 */
export function planStart(
  delivery: DueDelivery,
  urls: readonly string[],
  buffer: readonly DueDelivery[],
  host: StartPlanHost,
): { plan: Plan; step: RouteStep | undefined } {
  const plan: Plan =
    host.breaker === undefined || urls.length === 0
      ? { kind: 'send', urls: [], skipped: [] }
      : host.breaker.plan(urls, delivery.firstAttemptAt, host.now())
  const step = plan.kind === 'send' ? host.steps.of(delivery) : undefined
  if (plan.kind === 'send' && step === undefined) {
    // Without a breaker's plan, the delivery goes to every URL of its destination.
    const target = plan.urls.length > 0 ? plan.urls : urls
    // Read only when it waits: the lane's buffer as it is then.
    const behind = () => buffer.filter((d) => d !== delivery && d.destination === delivery.destination).map((d) => d.id)
    if (!host.limits.admit(delivery.id, target, behind)) return { plan: { kind: 'wait' }, step }
  }
  return { plan, step }
}
