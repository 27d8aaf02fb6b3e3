import { randomBytes } from 'node:crypto'
import { isStoreFailure } from '../store/data-error'
import type { Store } from '../store/store'
import type { WriteKind } from '../events/readings'
import type { StoreHealth } from './health'

// The audience the health probe writes. The admin API refuses an empty audience name, so no
// real audience can ever share these rows; the probe leaves it empty.
const PROBE_SOURCE = 'tracklet:health-probe'
const PROBE_AUDIENCE = ''
// Characters per probe member: random hex (incompressible), well under PostgreSQL's index row limit.
const PROBE_MEMBER_CHARS = 1000

/**
 * `store`, with the outcome of every write reported to `health` (only the store's own failures:
 * `isStoreFailure`); reads pass through untouched.
 * The store implementations stay unaware of health: it is learned here, from the outside.
 */
export function watchWrites(store: Store, health: StoreHealth): Store {
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
        if (isStoreFailure(error)) health.failed(kind, error, bytesOf(...args))
        throw error
      }
      health.succeeded(kind)
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
    enqueue: watch('deliveries', store.enqueue, (deliveries) =>
      deliveries.reduce((sum, d) => sum + Buffer.byteLength(d.json), 0),
    ),
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

/**
 * A write that touches nothing a user sees, of at least `bytes`: it fills the probe audience with
 * that many bytes of new members in one transaction, then empties it in another (so the next
 * probe needs new room again, as ingest does), and enqueues nothing.
 */
export async function probeWrite(store: Store, bytes = 0): Promise<void> {
  const members = Array.from({ length: Math.max(1, Math.ceil(bytes / PROBE_MEMBER_CHARS)) }, () =>
    randomBytes(PROBE_MEMBER_CHARS / 2).toString('hex'),
  )
  await store.syncAudience(PROBE_SOURCE, PROBE_AUDIENCE, members, () => [])
  await store.syncAudience(PROBE_SOURCE, PROBE_AUDIENCE, [], () => [])
}
