import type { DeliveryView } from '../store/store'
import type { AdminContext } from './operations'
import { waitingText } from '../store/endpoint-held'

/**
 * The deliveries with `nextAttemptAt` as an operator should read it. A pending delivery whose every
 * webhook URL's circuit is open is not attempted until a probe to one of them succeeds (which wakes
 * it at once), so its next attempt is the earliest next probe of its URLs, not the time the
 * parking wrote (a recheck some minutes out). A pending delivery due now that a limited URL holds
 * back says why in `waiting` (docs/delivery-controls.md).
 */
export async function withProbeTimes(
  context: Pick<AdminContext, 'store' | 'webhooks'>,
  deliveries: DeliveryView[],
): Promise<DeliveryView[]> {
  const urlsOf = (delivery: DeliveryView): string[] =>
    [...context.webhooks]
      .filter(([, routes]) =>
        routes.some((r) => r.source === delivery.source && r.destination === delivery.destination),
      )
      .map(([url]) => url)
  const pending = deliveries.filter((delivery) => delivery.status === 'pending')
  const urls = [...new Set(pending.flatMap(urlsOf))]
  if (urls.length === 0) return deliveries
  const circuits = new Map((await context.store.circuits.get(urls)).map((circuit) => [circuit.url, circuit]))
  const limits = await context.store.endpointLimits.read(urls)
  const now = Date.now()
  return deliveries.map((delivery) => {
    if (delivery.status !== 'pending') return delivery
    const probes = urlsOf(delivery).map((url) => {
      const circuit = circuits.get(url)
      return circuit?.state === 'open' ? circuit.nextProbeAt : undefined
    })
    if (probes.length === 0 || probes.some((at) => at === undefined)) {
      const due = delivery.nextAttemptAt === null || Date.parse(delivery.nextAttemptAt) <= now
      const mine = new Set(urlsOf(delivery))
      const waiting = due
        ? waitingText(
            limits.filter((state) => mine.has(state.url)),
            now,
          )
        : undefined
      return waiting === undefined ? delivery : { ...delivery, waiting }
    }
    return { ...delivery, nextAttemptAt: new Date(Math.min(...(probes as number[]))).toISOString() }
  })
}
