import { randomUUID } from 'node:crypto'
import type { Store } from '../store/store'
import type { StoreHealth, WriteKind } from './health'

// The audience the health probe rewrites. The admin API refuses an empty audience name, so no
// real audience can ever share these rows; the probe keeps at most one member in it.
const PROBE_SOURCE = 'tracklet:health-probe'
const PROBE_AUDIENCE = ''

/**
 * `store`, with the outcome of every write reported to `health`; reads pass through untouched.
 * The store implementations stay unaware of health: it is learned here, from the outside.
 */
export function watchWrites(store: Store, health: StoreHealth): Store {
  const watch =
    <Args extends unknown[], Result>(kind: WriteKind, write: (...args: Args) => Promise<Result>) =>
    async (...args: Args): Promise<Result> => {
      let result: Result
      try {
        result = await write.apply(store, args)
      } catch (error) {
        health.failed(kind, error)
        throw error
      }
      health.succeeded(kind)
      return result
    }
  return {
    kind: store.kind,
    circuits: store.circuits,
    enqueue: watch('deliveries', store.enqueue),
    syncAudience: watch('deliveries', store.syncAudience),
    retry: watch('deliveries', store.retry),
    failUnconfiguredSources: watch('deliveries', store.failUnconfiguredSources),
    record: watch('outcomes', store.record),
    claim: watch('claims', store.claim),
    renew: watch('claims', store.renew),
    release: watch('claims', store.release),
    prune: watch('retention', store.prune),
    nextDueAt: (...args) => store.nextDueAt(...args),
    get: (...args) => store.get(...args),
    list: (...args) => store.list(...args),
    listNewest: (...args) => store.listNewest(...args),
    find: (...args) => store.find(...args),
    retryMatching: watch('deliveries', store.retryMatching),
    endpoints: (...args) => store.endpoints(...args),
    backlog: () => store.backlog(),
    close: () => store.close(),
  }
}

/**
 * A write that touches nothing a user sees: it replaces the one member of the probe audience with
 * a new one (a delete and an insert, in one transaction) and enqueues nothing.
 */
export async function probeWrite(store: Store): Promise<void> {
  await store.syncAudience(PROBE_SOURCE, PROBE_AUDIENCE, [randomUUID()], () => [])
}
