import type { Registry } from 'prom-client'
import { log } from '../log'
import type { OrderingStore } from '../store/ordering/ordering-store'
import { promClient } from './prom-client'

/** The gauge of deliveries waiting behind an earlier one of their user (docs/delivery-controls.md). */
export const ORDER_WAITING_METRIC = 'tracklet_deliveries_waiting_for_order'

/**
 * Ordered delivery's gauge, registered in a relay's own registry by `RelayMetrics`: read from the
 * store at each scrape (every relay on the store sees the same figure), one statement on the
 * ordering index, which holds only ordered destinations' pending deliveries.
 */
export function orderMetrics(registers: Registry[], store: Pick<{ ordering: OrderingStore }, 'ordering'>): void {
  ;new (promClient().Gauge)({
    name: ORDER_WAITING_METRIC,
    help: 'Pending deliveries to an ordered destination waiting behind an earlier one of their user, by route (every relay on the store).',
    labelNames: ['source', 'destination'],
    registers,
    async collect() {
      this.reset()
      try {
        for (const row of await store.ordering.waiting()) {
          this.set({ source: row.source, destination: row.destination }, row.count)
        }
      } catch (error) {
        // Without the gauge (not a stale value); tracklet_store_writable and /healthz say more.
        log.error(`metrics: could not read the deliveries waiting for order: ${(error as Error).message}`, {
          event: 'metrics-failed',
        })
      }
    },
  })
}
