import type { Pool } from 'pg'
import { openPool, type PgLoader } from '../../kit/postgres/pool'
import { PostgresCatalog } from './postgres/catalog'
import { PostgresLoader } from './postgres/loader'
import { schemaOf, type WarehouseSettings, warehouseTarget } from './settings'
import type { MessageOutcome, OutboundMessage } from './types'

/**
 * The longest one statement of a load (or the wait for a connection) may take, ms: a load of
 * `maxBatch` rows into a busy warehouse takes seconds, and one that hangs fails after this.
 */
export const LOAD_TIMEOUT_MS = 60_000

// One load at a time per source; the second connection serves the schema's reads meanwhile.
const CONNECTIONS = 2

/** What the warehouse needs from the relay around it. */
export interface WarehouseContext {
  /** The source whose messages it loads (its name is the default schema). */
  readonly source: string
  /** Loads `pg` (injectable, as the store's is). */
  readonly loadPg?: PgLoader
  /** The clock of `uuid_ts`. */
  readonly now?: () => Date
}

/** One source's live warehouse: it loads batches and says what became of each message. */
export interface WarehouseSender {
  /** `postgres://host:5432/database?schema=web`: what the breaker keeps a circuit for. */
  readonly targets: readonly string[]
  /** How many messages a load gathers, and how long it waits for more. */
  readonly batching: { readonly maxMessages: number; readonly maxWaitMs: number }
  /** Loads a batch; one outcome per message, in order. Never rejects. */
  sendBatch(batch: readonly OutboundMessage[]): Promise<readonly MessageOutcome[]>
  /** Ends the connections, after the load under way. */
  close(): Promise<void>
}

/** The warehouse of one source. Opens no connection until its first load. */
export function createWarehouseSender(settings: WarehouseSettings, context: WarehouseContext): WarehouseSender {
  const target = warehouseTarget(settings, context.source)
  const schema = schemaOf(settings, context.source)
  let opened: Promise<{ pool: Pool; loader: PostgresLoader }> | undefined
  let loading: Promise<unknown> = Promise.resolve()
  const open = () => {
    opened ??= openPool(settings.url, { max: CONNECTIONS, storeTimeout: LOAD_TIMEOUT_MS }, context.loadPg).then(
      (pool) => {
        const catalog = new PostgresCatalog(pool, schema)
        const now = context.now
        return {
          pool,
          loader: new PostgresLoader(pool, catalog, { url: settings.url, schema, ...(now && { now }) }),
        }
      },
    )
    return opened
  }
  return {
    targets: Object.freeze([target]),
    batching: Object.freeze({ maxMessages: settings.maxBatch, maxWaitMs: settings.loadEvery }),
    async sendBatch(batch) {
      const run = async (): Promise<readonly MessageOutcome[]> => {
        try {
          return await (await open()).loader.load(batch)
        } catch (error) {
          // pg missing, or a URL pg cannot use: every message waits for the operator.
          opened = undefined
          const reason = error instanceof Error ? error.message : String(error)
          return batch.map(() => ({ kind: 'failed', retryable: true, error: reason }) as const)
        }
      }
      const result = loading.then(run)
      loading = result
      return result
    },
    async close() {
      await loading
      const current = opened
      opened = undefined
      if (current !== undefined) await (await current.catch(() => undefined))?.pool.end()
    },
  }
}
