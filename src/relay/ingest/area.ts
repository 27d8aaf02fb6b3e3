import type { Area } from '../area'
import type { SourceRegistry } from '../sources/source-registry'
import { WriteKeys } from '../http/auth'
import type { RelayEvents } from '../events/channel'
import type { AuthLimiter } from '../http/auth-limiter'
import type { Store } from '../store/store'
import { GroupCommit } from './group-commit'
import type { IngestTap } from '../events/tap'
import type { IngestCheck } from './ingest-check'
import { ingestRoutes } from './routes'

/** What ingest needs from the relay. */
export interface IngestDeps {
  /** The outbox, as every write's outcome tells /healthz. */
  store: Store
  /** The sources, looked up by write key on each request (they may change while the relay runs). */
  sources: SourceRegistry
  /** Counts failed write keys per client address, and refuses an address over its failures. */
  authLimiter: AuthLimiter
  /** New deliveries were committed: wake the delivery worker. */
  wake: () => void
  /** Asked of each valid message before the outbox (`ingest-check.ts`): the features' checks. */
  check?: IngestCheck
  /** Where ingest tells what happens: `ingested`, `filtered`, `refused`. */
  events: RelayEvents
  /** Told of each message (the live stream). */
  tap?: IngestTap
}

/**
 * Ingest, the area of the clients that send: `POST /v1/batch` and the single-message calls,
 * each message checked and written to the outbox (group-committed with other requests of the
 * moment) before the answer. Stopping commits a group still waiting.
 */
export function createIngest(deps: IngestDeps): Area {
  const commits = new GroupCommit(deps.store)
  const keysOf = () =>
    new WriteKeys(deps.sources.all().flatMap((s) => s.writeKeyDigests.map((digest) => [digest, s.routed] as const)))
  let writeKeys = keysOf()
  const unsubscribe = deps.sources.onChange(() => {
    writeKeys = keysOf()
  })
  const check = deps.check
  const routes = ingestRoutes({
    // Read on each request: a request gets the sources of the moment it arrived.
    get writeKeys() {
      return writeKeys
    },
    authLimiter: deps.authLimiter,
    commits,
    wake: deps.wake,
    events: deps.events,
    ...(check === undefined ? {} : { check }),
    ...(deps.tap === undefined ? {} : { tap: deps.tap }),
  })
  // A group still waiting is committed (its requests' connections are gone, but the client may
  // not have sent them anywhere else; at-least-once).
  return {
    routes,
    stop: async () => {
      unsubscribe()
      await commits.flush()
    },
  }
}
