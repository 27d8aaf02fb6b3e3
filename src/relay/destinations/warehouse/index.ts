import type { DestinationModule } from '../destination'
import { WEBHOOK_RETRIES } from '../webhooks/index'
import { createWarehouseSender } from './sender'
import { parseWarehouseSettings, type WarehouseSettings, warehouseSecrets } from './settings'

/**
 * The Warehouse destination (docs/warehouse.md): a source's messages loaded into the platform's
 * tables in a PostgreSQL schema, in batches of up to `maxBatch` gathered for up to `loadEvery`.
 * Its one target is the warehouse (`postgres://host:5432/database?schema=web`, no password); a
 * warehouse that is down is retried on the platform's schedule, behind the breaker.
 */
export const warehouse: DestinationModule<WarehouseSettings> = {
  name: 'Warehouse',
  parseSettings: parseWarehouseSettings,
  secrets: warehouseSecrets,
  create(settings, context) {
    const sender = createWarehouseSender(settings, { source: context.source })
    return {
      targets: sender.targets,
      batching: sender.batching,
      retries: WEBHOOK_RETRIES,
      sendBatch: (batch) => sender.sendBatch(batch),
      close: () => sender.close(),
    }
  },
}
