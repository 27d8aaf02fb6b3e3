/**
 * One shared `beforeExit` listener for every client with work outstanding, so that many clients
 * never pile up listeners (nor a MaxListenersExceededWarning), and idle clients hold none.
 * Nothing is registered at import: the listener exists only while some client is busy.
 */
const busyClients = new Set<() => void>()

function onBeforeExit(): void {
  // Copy: a handler may finish its work synchronously and leave the set.
  for (const drain of [...busyClients]) drain()
}

/** Calls `drain` when the event loop is about to empty, until `unwatchBeforeExit(drain)`. */
export function watchBeforeExit(drain: () => void): void {
  if (busyClients.size === 0) process.on('beforeExit', onBeforeExit)
  busyClients.add(drain)
}

export function unwatchBeforeExit(drain: () => void): void {
  if (!busyClients.delete(drain)) return
  if (busyClients.size === 0) process.off('beforeExit', onBeforeExit)
}
