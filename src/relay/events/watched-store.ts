import { isStoreFailure } from '../store/data-error'
import type { NewDelivery, Store } from '../store/store'
import type { RelayEvents } from './channel'
import type { WriteKind } from './readings'

/**
 * `store`, with the outcome of every write published on `events` as a `write` event (a failure
 * only when it is the store's own: `isStoreFailure`); reads pass through untouched. The one place
 * the store is watched: the relay hands every area this copy, and whoever judges the store's
 * health (telemetry's `/healthz`) reads the events. The store implementations stay unaware of it.
 */
export function watchWrites(store: Store, events: RelayEvents): Store {
  const watch =
    <Args extends unknown[], Result>(
      kind: WriteKind,
      write: (...args: Args) => Promise<Result>,
      bytesOf: (...args: Args) => number = () => 0,
    ) =>
    async (...args: Args): Promise<Result> => {
      let result: Result
      try {
        result = await write.apply(store, args)
      } catch (error) {
        // Data the store refused says nothing of the store: it takes other writes (ingest writes
        // that group again without the offending request). Only the store's own failures count.
        if (isStoreFailure(error)) events.publish({ type: 'write', kind, error, bytes: bytesOf(...args) })
        throw error
      }
      if (events.listened) events.publish({ type: 'write', kind })
      return result
    }
  return {
    kind: store.kind,
    circuits: store.circuits,
    sessions: store.sessions,
    replays: store.replays,
    sourceConfigs: store.sourceConfigs,
    alertClaims: store.alertClaims,
    violations: store.violations,
    suppressions: store.suppressions,
    endpointLimits: store.endpointLimits,
    ordering: store.ordering,
    enqueue: watch('deliveries', store.enqueue, jsonBytes),
    // Only where the store has it: ingest then writes violations on their own, as before.
    ...(store.enqueueWithViolations === undefined
      ? {}
      : { enqueueWithViolations: watch('deliveries', store.enqueueWithViolations, jsonBytes) }),
    syncAudience: watch('deliveries', store.syncAudience),
    retry: watch('deliveries', store.retry),
    failUnconfiguredSources: watch('deliveries', store.failUnconfiguredSources),
    record: watch('outcomes', store.record),
    claim: watch('claims', store.claim),
    renew: watch('claims', store.renew),
    release: watch('claims', store.release),
    prune: watch('retention', store.prune),
    nextDueIn: (...args) => store.nextDueIn(...args),
    databaseNow: () => store.databaseNow(),
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

// The messages' bytes a failed write of deliveries leaves unwritten.
function jsonBytes(deliveries: readonly NewDelivery[]): number {
  return deliveries.reduce((sum, d) => sum + Buffer.byteLength(d.json), 0)
}
