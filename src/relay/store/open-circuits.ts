import type { CircuitStore } from './circuits'
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
    if (store instanceof SqliteStore) return new SqliteCircuits(store.db)
  }
  throw new Error(`the circuit breaker has no implementation for the ${store.kind} store`)
}
