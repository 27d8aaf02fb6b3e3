import type { DestinationModule, MessageOutcome, TargetRequest } from '../destination'
import { reportStatus } from '../status-board'
import { WEBHOOK_RETRIES } from '../webhooks/index'
import { conflictsOf, conflictText } from './conflicts'
import { createWarehouseSender } from './sender'
import { parseWarehouseSettings, type WarehouseSettings, warehouseSecrets } from './settings'

/**
 * The Warehouse destination (docs/warehouse.md): a source's messages loaded into the platform's
 * tables in a PostgreSQL schema, in batches of up to `maxBatch` gathered for up to `loadEvery`.
 * Its one target is the warehouse (`postgres://host:5432/database?schema=web`, no password); a
 * warehouse that is down is retried on the platform's schedule, behind the breaker. Each message's
 * load is a request to that target in the delivery log, whose answer lists its type conflicts.
 */
export const warehouse: DestinationModule<WarehouseSettings> = {
  name: 'Warehouse',
  parseSettings: parseWarehouseSettings,
  secrets: warehouseSecrets,
  metrics: [
    {
      name: 'tracklet_warehouse_conflicts_total',
      help: "Values the warehouse stored as NULL because its column's type could not hold them, by source.",
      count: (detail) => conflictsOf(detail).length,
    },
  ],
  create(settings, context) {
    const sender = createWarehouseSender(settings, { source: context.source })
    const target = sender.targets[0]!
    return {
      targets: sender.targets,
      batching: sender.batching,
      retries: WEBHOOK_RETRIES,
      async sendBatch(batch) {
        const started = performance.now()
        const outcomes = await sender.sendBatch(batch)
        const ms = Math.round(performance.now() - started)
        let loaded = 0
        let conflicts = 0
        const delivered: readonly TargetRequest[] = [{ url: target, status: 200, ms }]
        const relayed = outcomes.map((outcome): MessageOutcome => {
          if (outcome.kind === 'failed') return { ...outcome, requests: [{ url: target, error: outcome.error, ms }] }
          loaded++
          const found = outcome.detail === undefined ? [] : conflictsOf(outcome.detail)
          if (found.length === 0) return { ...outcome, requests: delivered }
          conflicts += found.length
          return { ...outcome, requests: [{ url: target, status: 200, ms, responseBody: conflictText(found) }] }
        })
        if (loaded > 0) {
          const rows = `${loaded} ${loaded === 1 ? 'message' : 'messages'}`
          reportStatus(target, { last: { at: Date.now(), text: `load of ${rows}` }, conflicts })
        }
        return relayed
      },
      close: () => sender.close(),
    }
  },
}
