/**
 * A timer as every runtime returns it: an object with `ref`/`unref` on Node and Bun, a number in
 * Deno, Workers and Edge. Node's timers are the ones that may hold a process open, so only there is
 * there anything to do.
 */
export type Timer = ReturnType<typeof setTimeout>

type Refable = { ref?: () => unknown; unref?: () => unknown }
const deno = (globalThis as { Deno?: { unrefTimer?(id: number): void; refTimer?(id: number): void } }).Deno

/** Lets the process exit while `timer` runs (Node, Bun, Deno); elsewhere there is no process to hold. */
export function unref<T extends Timer | undefined>(timer: T): T {
  if (typeof timer === 'object' && timer !== null) (timer as Refable).unref?.()
  else if (typeof timer === 'number') deno?.unrefTimer?.(timer)
  return timer
}

/** Makes `timer` hold the process open again (the client is draining). */
export function ref(timer: Timer | undefined): void {
  if (typeof timer === 'object' && timer !== null) (timer as Refable).ref?.()
  else if (typeof timer === 'number') deno?.refTimer?.(timer)
}
