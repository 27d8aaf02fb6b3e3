/**
 * One shared `beforeExit` listener for every client with work outstanding, so that many clients
 * never pile up listeners (nor a MaxListenersExceededWarning), and idle clients hold none.
 * Nothing is registered at import: the listener exists only while some client is busy.
 *
 * `process` is read from the global, not imported: Node and Bun have it, and so does Deno in an
 * npm package's scope, so a short script that forgets `closeAndFlush()` still delivers there.
 * Workers and Edge have no such moment: their queued messages wait for `flush()`,
 * `closeAndFlush()` or `waitUntil`.
 */
type ExitHost = {
  on?(event: 'beforeExit', listener: () => void): unknown
  off?(event: 'beforeExit', listener: () => void): unknown
}
const host = (globalThis as { process?: ExitHost }).process
const busyClients = new Set<() => void>()

function onBeforeExit(): void {
  // Copy: a handler may finish its work synchronously and leave the set.
  for (const drain of [...busyClients]) drain()
}

/** Calls `drain` when the event loop is about to empty, until `unwatchBeforeExit(drain)`. */
export function watchBeforeExit(drain: () => void): void {
  if (typeof host?.on !== 'function') return
  if (busyClients.size === 0) host.on('beforeExit', onBeforeExit)
  busyClients.add(drain)
}

export function unwatchBeforeExit(drain: () => void): void {
  if (!busyClients.delete(drain)) return
  if (busyClients.size === 0) host?.off?.('beforeExit', onBeforeExit)
}
