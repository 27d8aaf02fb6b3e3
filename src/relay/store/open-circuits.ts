import type { CircuitStore } from './circuits'
import type { Queryable } from './postgres/postgres-circuits'
import type { Store } from './store'

/**
 * The circuits of the webhook URLs, in the same database as `store` (so every relay sharing the
 * database shares them). Each implementation is loaded only when its store is in use.
 */
export async function openCircuits(store: Store): Promise<CircuitStore> {
  if (store.kind === 'sqlite') {
    const [{ SqliteStore }, { SqliteCircuits }] = await Promise.all([
      import('./sqlite/sqlite-store'),
      import('./sqlite/sqlite-circuits'),
    ])
    if (store instanceof SqliteStore)
      // [relay-workers] A file shared by several processes keeps the probes the others hold.
      return new SqliteCircuits(store.db, { sharedByProcesses: store.sharedByProcesses })
  }
  // The PostgreSQL store's connection pool, shared with it.
  const pool = (store as Partial<{ pool: Queryable }>).pool
  if (store.kind === 'postgres' && typeof pool?.query === 'function') {
    const { PostgresCircuits } = await import('./postgres/postgres-circuits')
    return new PostgresCircuits(pool)
  }
  throw new Error(`the circuit breaker has no implementation for this ${store.kind} store`)
}
