import type { Area } from '../area'
import type { RoutedSource } from '../config/sources'
import { WriteKeys } from '../http/auth'
import type { AuthLimiter } from '../http/auth-limiter'
import type { Store } from '../store/store'
import { GroupCommit } from './group-commit'
import { type IngestObserver, ingestRoutes } from './routes'
import type { IngestTap } from './tap'

/** What ingest needs from the relay. */
export interface IngestDeps {
  /** The outbox, as every write's outcome tells /healthz. */
  store: Store
  /** Each source with its write key. */
  sources: readonly { writeKey: string; routed: RoutedSource }[]
  /** Counts failed write keys per client address, and refuses an address over its failures. */
  authLimiter: AuthLimiter
  /** New deliveries were committed: wake the delivery worker. */
  wake: () => void
  /** Told how each request ended (metrics). Must not throw. */
  observe?: IngestObserver
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
  const routes = ingestRoutes({
    writeKeys: new WriteKeys(deps.sources.map((s) => [s.writeKey, s.routed] as const)),
    authLimiter: deps.authLimiter,
    commits,
    wake: deps.wake,
    ...(deps.observe === undefined ? {} : { observeIngest: deps.observe }),
    ...(deps.tap === undefined ? {} : { tap: deps.tap }),
  })
  // A group still waiting is committed (its requests' connections are gone, but the client may
  // not have sent them anywhere else; at-least-once).
  return { routes, stop: () => commits.flush() }
}
