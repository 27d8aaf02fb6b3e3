/**
 * Polls `check` every 10 ms until it gives something other than `undefined`, and returns that.
 * Fails after `timeoutMs` naming `what` it waited for. Tests wait for what happens, never for a
 * fixed time.
 */
export async function waitFor<T>(
  check: () => T | undefined | Promise<T | undefined>,
  what = 'condition',
  timeoutMs = 15_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await check()
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}
