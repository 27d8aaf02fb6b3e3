import type { Route } from './http/route'

/**
 * What each area of the relay (ingest, delivery, console, telemetry) gives `relay.ts`, which only
 * composes them: the routes it serves and how it stops. See docs/architecture.md.
 */
export interface Area {
  /** Its HTTP routes; the router serves every area's in one list. */
  readonly routes: readonly Route[]
  /** Releases what it holds (timers, connections, work still waiting). Called once, on close. */
  stop(): Promise<void> | void
}
