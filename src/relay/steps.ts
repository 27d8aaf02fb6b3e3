import { log } from './log'

/** One named step of the relay's start-up undo or of its shutdown. */
export type Step = readonly [name: string, run: () => unknown]

/**
 * Runs `steps` in order, each awaited. A step that throws does not keep the later ones from
 * running (a store left open would hold its file or its connections); the first error is
 * thrown once all have run.
 */
export async function runSteps(steps: readonly Step[]): Promise<void> {
  let failure: { error: unknown } | undefined
  for (const [name, run] of steps) {
    try {
      await run()
    } catch (error) {
      log.debug(`closing: ${name} failed: ${(error as Error).message}`, { event: 'close-step-failed', step: name })
      failure ??= { error }
    }
  }
  if (failure !== undefined) throw failure.error
}

/** `fn` called at most once: later calls get the first call's promise (close() is idempotent). */
export function once(fn: () => Promise<void>): () => Promise<void> {
  let promise: Promise<void> | undefined
  return () => (promise ??= fn())
}
